# goblin's build, test and benchmark entry points. `make test` is the one
# command that checks everything; .ci/run calls it.
GO        ?= go
PKGS      ?= ./...
BENCHTIME ?= 1x

.PHONY: all build setup setup-test run test beside checks vet lint race twohost asm godriver nonrace stress generate generate-check tidy-check bench bench-udp fuzz clean

all: build

build:
	$(GO) build $(PKGS)

## setup: install the Debian packages and Maven artifacts tests need
setup:
	./scripts/setup.sh

## run: start goblin-server on every local transport: the default Unix socket,
## TCP 6380 (Redis tools), the shared-memory ring and Aeron IPC (its Aeron
## media driver runs inside goblin-server: no JVM). RUN_FLAGS replaces the
## listeners. It needs only Go: no setup, no Java, no Maven. The binary goes
## to BIN.
RUN_FLAGS ?= --listen "uds://,tcp://127.0.0.1:6380,ring:///dev/shm/goblin?proto=sbe,aeron:ipc?proto=sbe"
BIN       ?= bin
run:
	$(GO) build -o $(BIN)/goblin-server ./cmd/goblin-server
	$(BIN)/goblin-server $(RUN_FLAGS)

vet:
	$(GO) vet $(PKGS)

## TEST_VET: the -vet of the go test runs (race, nonrace, twohost, stress).
## Empty: go test's own curated subset of vet's checks, as a plain go test
## runs it. make test sets it to off when it runs everything: its checks
## step runs the whole `go vet` over every package, tests included, so the
## subset again in each go test type-checked the tree twice more (about 50
## CPU-s of the race step's ~190 CPU-s of compiling, extrapolated from a
## fresh clone: go test -race -exec /bin/true over store, engine, cluster,
## transport and aeron took 73 CPU-s with it, 53 without; the go vet -race
## below costs 8.5). What `go vet`
## cannot see are the files only a -race build compiles (//go:build race):
## with TEST_VET=off the race step vets their packages (RACE_VET) with
## `go vet -race` first, sharing its compiles with the race run's.
TEST_VET ?=
VETFLAG   = $(if $(TEST_VET),-vet=$(TEST_VET))
RACE_VET  = $(if $(filter off,$(TEST_VET)),$(sort $(patsubst %/,%,$(dir $(shell grep -rlE --include='*.go' '^//go:build.*\brace\b' .)))))

## race: every test, fuzz seed corpora included, under the race detector
## (which also compiles in the store's invariants checks); TestTwoHosts runs
## in twohost instead. GORACE=atexit_sleep_ms=0: a race-built process
## otherwise sleeps a second as it exits, in case another goroutine is about
## to report a race. Every test binary (about 70) and every race-built helper
## process a test starts paid it: about 70 s of sleep in the race lane, half
## of it on the run's wall time. A race found while the tests run is still
## reported and still fails the run; a GORACE of your own still applies (it
## comes after, so its options win). -parallel 4: the tests that run in parallel (the
## end-to-end and two-namespace ones) mostly wait on processes and timeouts,
## so four at once overlap their waits on two cores. (-p 3 was tried: the
## race run took longer, 526 s against about 430 s, and a new link's first
## datagram timed out in internal/testkit/netns.)
##
## RACE_SIDE: packages that, when the run is all of it (PKGS=./...), run in
## a go test of their own beside the main one instead of in one of its two
## package slots; their output follows the main run's. Off by default (one
## go test, as before). The candidate is ./aeron/interop: its race run is
## the longest (157 s on a quiet VM) and mostly waits on JVMs and driver
## timeouts (113 CPU-s in 338 s of wall under load, a third of a core), so
## beside the main run it would free a slot for about 150 s. Not yet shown
## on a quiet VM: in the one whole run tried (load 50 from other jobs) its
## timing tests (TestTwoHostDriverKilled, TestGoDriverUDPLoopback) failed,
## as others did, and the run's CPU (user+sys ~960 s at 443c875) leaves
## little room on two cores. Try: make test RACE_SIDE=./aeron/interop.
RACE_SIDE ?=
RACE_FLAGS = -race -count=1 -parallel 4 -timeout 20m -skip '^TestTwoHosts$$' $(VETFLAG)
race:
ifneq ($(RACE_VET),)
	$(GO) vet -race $(RACE_VET)
endif
ifeq ($(and $(filter ./...,$(PKGS)),$(RACE_SIDE)),)
	GORACE="atexit_sleep_ms=0 $(GORACE)" $(GO) test $(RACE_FLAGS) \
	  $(if $(filter ./...,$(PKGS)),$(RACE_FIRST)) $(PKGS)
else
	@export GORACE="atexit_sleep_ms=0 $(GORACE)"; side=$$(mktemp); sidepkgs=$$(mktemp); \
	  $(GO) list $(RACE_SIDE) > $$sidepkgs || exit 1; \
	  echo "$(GO) test $(RACE_FLAGS) $(RACE_SIDE) (beside the main race run; its output follows it)"; \
	  $(GO) test $(RACE_FLAGS) $(RACE_SIDE) > $$side 2>&1 & sidepid=$$!; \
	  main=$$($(GO) list $(PKGS) | grep -v -x -F -f $$sidepkgs); \
	  echo "$(GO) test $(RACE_FLAGS) $(filter-out $(RACE_SIDE),$(RACE_FIRST)) <the rest of ./...>"; \
	  $(GO) test $(RACE_FLAGS) $(filter-out $(RACE_SIDE),$(RACE_FIRST)) $$main; rc=$$?; \
	  wait $$sidepid; siderc=$$?; cat $$side; rm -f $$side $$sidepkgs; \
	  [ $$rc -eq 0 ] && [ $$siderc -eq 0 ]
endif

## RACE_FIRST: the race run's longest packages, longest first (their race
## run's Elapsed in `go test -race -json`), named ahead of ./... when the run
## is all of it. go test runs each package once, in the order it is first
## named, two at a time on two cores: these start at once and the short
## packages fill the other slot around them, instead of a long one starting
## late in ./...'s alphabetical order and running alone at the end. A package
## whose race run takes more than about 20 s belongs here, at its place by
## length; one left out still runs, in ./...'s order after these. Ordered
## by the clean-clone race run at 443c875 (quiet VM: aeron/interop 157 s,
## cluster/member 72 s, store 64 s, aeron/driver 60 s, runner 39 s,
## reliability 38 s, store/collection 35 s, transport/ring 33 s) with
## cmd/goblin-server (176 s there) and transport/aeron (125 s) placed by
## their cut since: 354 -> 125 s and 268 -> 81 s of race run measured back
## to back under the same load, about 60 and 40 s on a quiet VM.
## reliability, store/collection and transport/ring were missing and
## started late in ./...'s order.
RACE_FIRST ?= ./aeron/interop ./cluster/member ./cmd/goblin-server ./store ./aeron/driver ./transport/aeron \
	./benchmarks/harness/runner ./reliability ./store/collection ./transport/ring ./client ./cluster ./aeron \
	./cmd/goblin-bench ./benchmarks/replbench ./docs ./engine ./benchmarks/harness/remote ./cmd/goblin-client \
	./benchmarks/clusterbench ./aeron/javadriver

## twohost: the two-namespace Aeron UDP test (needs root and ip(8); under
## CI=true a missing one fails it), verbose, and it must say it ran
twohost:
	@log=$$(mktemp); $(GO) test -count=1 -timeout 5m $(VETFLAG) -run '^TestTwoHosts$$' -v ./transport/aeron/ > $$log 2>&1; rc=$$?; \
	  grep -E '^(--- |.*TestTwoHosts ran|.*missing prerequisite)' $$log; \
	  if [ $$rc -ne 0 ]; then cat $$log; elif [ "$$CI" = true ] && ! grep -q 'TestTwoHosts ran' $$log; then echo 'CI=true: TestTwoHosts did not run'; rc=1; fi; \
	  rm -f $$log; exit $$rc

## asm: the packages with amd64 assembly again without the race detector,
## which swaps the assembly for its portable twin (see aeron/frame_other.go)
asm:
	$(GO) test -count=1 -timeout 10m ./aeron/ ./internal/shm/

## godriver: the aeron client's tests again, against goblin's Go media
## driver (aeronmd) instead of the Java one, UDP included (the loss-report
## test needs the Java driver's debug loss generator and skips, saying why)
godriver:
	GOBLIN_AERON_TEST_DRIVER=go $(GO) test -count=1 -timeout 10m ./aeron/

## nonrace: asm and godriver in one run, as `make test` runs them: the
## aeron client's tests against the Go media driver and internal/shm's,
## both without the race detector, so their amd64 assembly runs. (race
## runs the aeron tests against the Java driver, so each driver and each of
## the assembly and its portable twin is covered once.)
nonrace:
	GOBLIN_AERON_TEST_DRIVER=go $(GO) test -count=1 -timeout 10m $(VETFLAG) ./aeron/ ./internal/shm/

## stress: the ring stress test at size (8 client processes x STRESS_REQUESTS
## checked requests, RESP and SBE), without the race detector, which runs the
## 30,000-request version in `race`. Coverage cut: 200,000 requests per
## client, was 1,000,000 (each client's 64-record ring still wraps ~3,000
## times; STRESS_REQUESTS=1000000 runs the old size). The step runs alone
## at the end of make test, so its length was all on the run's wall time:
## 1,000,000 took 13 s in a clean-clone make test (55 s and 39.5 CPU-s
## under load 25); 200,000 takes 5 s there.
STRESS_REQUESTS ?= 200000
stress:
	GOBLIN_RING_STRESS_REQUESTS=$(STRESS_REQUESTS) $(GO) test -count=1 -timeout 15m $(VETFLAG) -run '^TestStress$$' -v ./transport/ring/

## generate: regenerate the SBE codecs from schemas/goblin.xml
generate:
	$(GO) generate ./proto/sbe

## generate-check: fail when the committed generated code is stale
generate-check: generate
	@test -z "$$(git status --porcelain -- proto/sbe)" || { git status --short -- proto/sbe; git diff --stat -- proto/sbe; echo "generated SBE code is stale: run make generate and commit"; exit 1; }

## tidy-check: fail when go.mod or go.sum is not tidy
tidy-check:
	$(GO) mod tidy -diff

## lint: staticcheck over everything but the SBE tool's generated code.
## -trimpath: staticcheck's cache is keyed on the packages' build IDs, which
## hold the package's directory unless the build trims it, so a clone at a
## new path re-analysed every package of the module (63 CPU-s of a
## clean-clone make test here, 1.2 in the same clone again). Trimmed, an
## earlier run's results serve any clone of the same code on the machine
## (1.1 s), as they would a CI whose Go cache persists; a machine's first
## run is unchanged. Findings name the files as before (module-relative).
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
lint:
	GOFLAGS="$(GOFLAGS) -trimpath" $(GO) run $(STATICCHECK) $$($(GO) list $(PKGS) | grep -v /proto/sbe/goblinsbe)

## checks: the static checks; read-only, so they may run beside the tests
checks: vet lint tidy-check

## test: what CI runs. Two lanes: the race run (which waits on processes,
## timeouts and sockets more than it computes) in one, and beside it, one
## after the other, the static checks and the non-race runs (beside); then
## the ring stress test, which wants the whole machine, alone at the end.
## generate-check rewrites proto/sbe, so it runs before any test compiles
## it. The binaries the tests start are built once for the whole run
## (testproc's build cache).
test: setup-test generate-check
	$(MAKE) -j2 --output-sync=target race beside $(TEST_VET_OFF)
	$(MAKE) stress $(TEST_VET_OFF)

# make test of everything runs `go vet` over everything in checks, so its go
# test runs leave vet off (see TEST_VET).
TEST_VET_OFF = $(if $(filter ./...,$(PKGS)),TEST_VET=off)

## setup-test: setup, but the Java interop peers are left to aeron/interop's
## tests, which build them (under setup's lock) early in the race run, beside
## the other packages' compiles, instead of before everything
setup-test:
	GOBLIN_SETUP_PEERS=tests ./scripts/setup.sh

## beside: what `make test` runs beside the race run, one at a time: the
## static checks (read-only), then the non-race runs. A new non-race CI step
## belongs here, not after the race run, unless it needs the machine alone.
beside:
	$(MAKE) checks
	$(MAKE) nonrace
	$(MAKE) twohost

## bench: the package benchmarks, once each
bench:
	$(GO) test -run '^$$' -bench . -benchtime $(BENCHTIME) $(PKGS)

## bench-udp: issue 17's Aeron UDP comparison, two network namespaces (root):
## the raw UDP socket floor (udp-floor), the Java driver pair with Aeron's
## Java Ping/Pong (aeron-raw), goblin's raw ping-pong over two in-process Go
## drivers (aeron-go) and goblin PING/SET/GET with in-process Go drivers on
## both sides (goblin, -driver inproc), fit2 profile, side by side in the
## archive's summary.md; then UDP throughput, 32 B and 1 KiB, Go driver
## pair vs Java driver pair (BenchmarkUDPThroughput). RUNS, SAMPLES and the
## other knobs of docs/benchmarks.md apply.
bench-udp:
	DRIVER=inproc SYSTEMS=goblin,aeron-go,aeron-raw,udp-floor TRANSPORTS=aeron-udp PROFILE=$${PROFILE:-fit2} ./benchmarks/aeron_network_latency.sh
	$(GO) test -run '^$$' -bench '^BenchmarkUDPThroughput$$' -benchtime 1x -timeout 20m ./aeron/interop/

## fuzz: run one fuzz target for a while, e.g. make fuzz FUZZ=FuzzParser PKG=./proto/resp
fuzz:
	$(GO) test -run '^$$' -fuzz '^$(FUZZ)$$' -fuzztime 60s $(PKG)

clean:
	$(GO) clean -testcache
