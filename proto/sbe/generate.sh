#!/usr/bin/env bash
# Regenerates proto/sbe/goblinsbe from schemas/goblin.xml with the real SBE
# tool (uk.co.real-logic:sbe-all, version in scripts/sbe.version) and its Go
# flyweight generator. `go generate ./proto/sbe` runs this; the output is
# committed, so building goblin needs no Java. The tool's output depends only
# on the schema and the tool version, so `make generate-check` can compare.
set -euo pipefail
cd "$(dirname "$0")"
root=../..
version=${SBE_VERSION:-$(cat "$root/scripts/sbe.version")}
m2=${MAVEN_REPO:-$HOME/.m2/repository}
jar="$m2/uk/co/real-logic/sbe-all/$version/sbe-all-$version.jar"
if [[ ! -s $jar ]]; then
	echo "sbe: fetching uk.co.real-logic:sbe-all:$version through Maven" >&2
	mvn -q -B dependency:get -Dartifact="uk.co.real-logic:sbe-all:$version" -Dtransitive=false >&2
fi
java_major=$(java -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')
if [[ -z $java_major || ${java_major%%.*} -lt 17 ]]; then
	echo "sbe: Java 17 or newer is required (found ${java_major:-none})" >&2
	exit 1
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# Property names as SbeTool and TargetCodeGeneratorLoader read them in
# sbe-all 1.38.1: sbe.target.language selects the generator and
# sbe.go.generate.generate.flyweights picks the flyweight (in-place) Go
# generator over the struct one.
java \
	-Dsbe.target.language=golang \
	-Dsbe.go.generate.generate.flyweights=true \
	-Dsbe.validation.stop.on.error=true \
	-Dsbe.validation.warnings.fatal=true \
	-Dsbe.output.dir="$out" \
	-jar "$jar" "$root/schemas/goblin.xml" >&2
# gofmt is layout only (the generator's indentation is not gofmt's), so
# the committed code passes any gofmt check; nothing else is changed.
gofmt -w "$out/goblinsbe"
rm -rf goblinsbe
mv "$out/goblinsbe" goblinsbe
