package report

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/goblin-kv/goblin/benchmarks/harness"
)

// hostCommand runs a short command on h and returns its trimmed output, or
// the error as text.
func hostCommand(ctx context.Context, h harness.Host, argv ...string) (string, error) {
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := h.Run(cctx, harness.ProcSpec{Argv: argv})
	return strings.TrimSpace(string(out)), err
}

// hostRead reads a small file on h through cat, so that a namespace
// wrapper applies (a netns has its own /sys/class/net); def when it cannot.
func hostRead(ctx context.Context, h harness.Host, path, def string) string {
	out, err := hostCommand(ctx, h, "cat", path)
	if err != nil || out == "" {
		return def
	}
	return out
}

// CollectHostFacts gathers the facts of both sides' hosts.
func CollectHostFacts(ctx context.Context, cfg *harness.Config) []harness.HostFacts {
	aeron := slices.Contains(cfg.Transports, harness.TAeronUDP) || len(cfg.Transports) == 0
	var out []harness.HostFacts
	for _, h := range []harness.Host{cfg.ServerSideHost(), cfg.ClientSideHost()} {
		var addrs []string
		for _, p := range cfg.NetPaths() {
			a := p.Server
			if h.Role() == "client" {
				a = p.Client
			}
			if a != "" && !slices.Contains(addrs, a) {
				addrs = append(addrs, a)
			}
		}
		facts := hostFacts(ctx, h, addrs)
		if java, err := h.Tool(cfg, "java"); err == nil && aeron && cfg.Driver.Kind != harness.DriverAeronmd {
			facts = append(facts, harness.KV{Key: "java.version", Value: harness.HostVersion(ctx, h, java, "-version")})
		}
		out = append(out, harness.HostFacts{Role: h.Role(), Host: h.Describe(), Facts: facts})
	}
	return out
}

// hostFacts gathers one host's facts.
func hostFacts(ctx context.Context, h harness.Host, addrs []string) harness.Metadata {
	var m harness.Metadata
	add := func(k, v string) { m = append(m, harness.KV{Key: k, Value: v}) }
	uname, err := hostCommand(ctx, h, "uname", "-a")
	if err != nil {
		uname = "unknown (" + err.Error() + ")"
	}
	add("uname", uname)
	model, logical, physical, sockets := parseCPUInfo([]byte(hostRead(ctx, h, "/proc/cpuinfo", "")))
	add("cpu.model", model)
	add("cpu.logical", fmt.Sprint(logical))
	add("cpu.physical_cores", fmt.Sprint(physical))
	add("cpu.sockets", fmt.Sprint(sockets))
	add("cpu.numa_nodes_online", hostRead(ctx, h, "/sys/devices/system/node/online", "not exposed (one node)"))
	add("cpu.governor", hostRead(ctx, h, "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "not exposed"))
	add("load", loadTriple(hostRead(ctx, h, "/proc/loadavg", "unknown")))
	for _, a := range addrs {
		prefix := "nic." + a + "."
		iface, err := ifaceOf(ctx, h, a)
		if err != nil {
			add(prefix+"interface", "unknown ("+err.Error()+")")
			continue
		}
		add(prefix+"interface", iface)
		add(prefix+"numa_node", nicNUMA(ctx, h, iface))
		drv, err := hostCommand(ctx, h, "readlink", "/sys/class/net/"+iface+"/device/driver")
		if err != nil || drv == "" {
			drv = "none (a virtual interface)"
		} else {
			drv = filepath.Base(drv)
		}
		add(prefix+"driver", drv)
		add(prefix+"speed_mbps", hostRead(ctx, h, "/sys/class/net/"+iface+"/speed", "not reported"))
		add(prefix+"mtu", hostRead(ctx, h, "/sys/class/net/"+iface+"/mtu", "unknown"))
	}
	return m
}

// nicNUMA is the NUMA node of an interface's device as the kernel reports
// it.
func nicNUMA(ctx context.Context, h harness.Host, iface string) string {
	v := hostRead(ctx, h, "/sys/class/net/"+iface+"/device/numa_node", "")
	switch v {
	case "":
		return "none (no device: a virtual interface)"
	case "-1":
		return "-1 (the kernel knows no node for it)"
	}
	return v
}

// WriteHostFacts writes each side's facts into dir/host-ROLE.txt.
func WriteHostFacts(dir string, facts []harness.HostFacts) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range facts {
		var b strings.Builder
		fmt.Fprintf(&b, "role: %s\nhost: %s\n", f.Role, f.Host)
		for _, kv := range f.Facts {
			fmt.Fprintf(&b, "%s: %s\n", kv.Key, strings.ReplaceAll(kv.Value, "\n", " "))
		}
		if err := os.WriteFile(filepath.Join(dir, "host-"+f.Role+".txt"), []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// hostAddrs lists h's interface addresses (ip -o addr show): interface
// name by address.
func hostAddrs(ctx context.Context, h harness.Host) (map[string]string, error) {
	out, err := hostCommand(ctx, h, "ip", "-o", "addr", "show")
	if err != nil {
		return nil, fmt.Errorf("ip -o addr show: %w", err)
	}
	addrs := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || (f[2] != "inet" && f[2] != "inet6") {
			continue
		}
		iface, _, _ := strings.Cut(f[1], "@")
		addr, _, _ := strings.Cut(f[3], "/")
		addrs[addr] = iface
	}
	return addrs, nil
}

// ifaceOf is the interface that holds addr on h.
func ifaceOf(ctx context.Context, h harness.Host, addr string) (string, error) {
	addrs, err := hostAddrs(ctx, h)
	if err != nil {
		return "", err
	}
	if iface, ok := addrs[addr]; ok {
		return iface, nil
	}
	return "", fmt.Errorf("no interface holds %s", addr)
}

// NicSnapshot records the NIC the address is on: ethtool -S (statistics)
// and -c (interrupt coalescing) when ethtool is installed, and
// /proc/net/dev always.
func NicSnapshot(ctx context.Context, h harness.Host, addr string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s host (%s), %s, address %s\n", h.Role(), h.Describe(), time.Now().UTC().Format(time.RFC3339Nano), addr)
	iface, err := ifaceOf(ctx, h, addr)
	if err != nil {
		fmt.Fprintf(&b, "# interface: unknown (%v)\n", err)
	} else {
		fmt.Fprintf(&b, "# interface: %s\n", iface)
		for _, flag := range []string{"-S", "-c"} {
			out, err := hostCommand(ctx, h, "ethtool", flag, iface)
			fmt.Fprintf(&b, "\n$ ethtool %s %s\n", flag, iface)
			if err != nil {
				fmt.Fprintf(&b, "(failed: %v)\n", err)
			}
			if out != "" {
				b.WriteString(out + "\n")
			}
		}
	}
	out, err := hostCommand(ctx, h, "cat", "/proc/net/dev")
	b.WriteString("\n$ cat /proc/net/dev\n")
	if err != nil {
		fmt.Fprintf(&b, "(failed: %v)\n", err)
	}
	b.WriteString(out + "\n")
	return b.String()
}

// CheckPaths checks every path's addresses against the hosts that should
// hold them. The server's address must be the server host's (servers and
// its driver bind it): a path that says otherwise is refused in a two-host
// run. A response control address that is the client's gets a warning: the
// response publication binds the control address on the server, and the
// client names that same server control URI as its remote target; given
// the client's address, the server's driver would try to bind an address
// it does not own.
func CheckPaths(ctx context.Context, cfg *harness.Config) ([]string, error) {
	srvAddrs, srvErr := hostAddrs(ctx, cfg.ServerSideHost())
	cliAddrs, cliErr := hostAddrs(ctx, cfg.ClientSideHost())
	var warnings []string
	for _, p := range cfg.NetPaths() {
		name := "the path"
		if p.Name != "" {
			name = "path " + p.Name
		}
		control := p.ControlAddr()
		_, onServer := srvAddrs[control]
		_, onClient := cliAddrs[control]
		if control != p.Server && (control == p.Client || onClient && !onServer) {
			warnings = append(warnings, fmt.Sprintf("%s: the response control address %s is the client's address. "+
				"Aeron's response publication binds the control address on the server, and the client uses that same server "+
				"control URI as its remote target; the server's media driver cannot bind an address it does not own. "+
				"Leave the control address out: it is derived from the server's address (%s).", name, control, p.Server))
		}
		if srvErr != nil {
			warnings = append(warnings, fmt.Sprintf("%s: could not list the server host's addresses: %v", name, srvErr))
		} else if _, ok := srvAddrs[p.Server]; !ok && cfg.TwoHosts() {
			return nil, fmt.Errorf("%w: %s: %s is not an address of the server host (%s); PATHS names the server's address first (NAME=SERVER/CLIENT)",
				harness.ErrConfig, name, p.Server, cfg.ServerSideHost().Describe())
		}
		if cliErr != nil {
			warnings = append(warnings, fmt.Sprintf("%s: could not list the client host's addresses: %v", name, cliErr))
		} else if _, ok := cliAddrs[p.Client]; !ok && cfg.TwoHosts() {
			warnings = append(warnings, fmt.Sprintf("%s: %s is not an address of the client host (%s); the raw Aeron Pong, which answers to it, will not reach the client",
				name, p.Client, cfg.ClientSideHost().Describe()))
		}
	}
	return warnings, nil
}
