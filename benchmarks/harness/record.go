package harness

import "time"

// Status of a result row.
const (
	StatusOK          = "ok"
	StatusUnavailable = "unavailable"
	StatusFailed      = "failed"
)

// Result is one operation of one case in one run.
type Result struct {
	Run     int
	Case    Case
	Op      Op
	Status  string
	Note    string // why a case is unavailable or failed
	Summary Summary
	Dist    []int64 // sample values at DistributionPoints (ok rows only)
	Profile string  // the profile's name for this case
	Client  string  // which measuring client
}

// CaseRecord is what the archive says about one case in one run.
type CaseRecord struct {
	Run     int
	Case    Case
	Status  string
	Note    string
	Profile Profile
	Client  string
	Info    map[string]string
}

// Report is everything one harness run measured.
type Report struct {
	Config  Config
	Started time.Time
	Ended   time.Time
	// LoadStart is /proc/loadavg when the run began: on a shared machine
	// the other work running beside the benchmark shows in the tails.
	LoadStart string
	// LoadEnd is /proc/loadavg when the last case had ended.
	LoadEnd string
	// Commit is the checkout's commit when the run began (the binaries
	// were built from it).
	Commit  string
	Results []Result
	Cases   []CaseRecord
	Meta    Metadata
	// Hosts are the facts of each side's host (uname, CPU, governor, the
	// NUMA node of each path's NIC) at the start of the first run.
	Hosts []HostFacts
	// Warnings are what the run found questionable but ran anyway (a
	// response control address that is the client's).
	Warnings []string
	// Qualification holds the extra pass with statistics collectors
	// attached (Config.Qualify): archived under qualification/, never
	// part of Results, the aggregate or the summary.
	Qualification      []Result
	QualificationCases []CaseRecord
	// Staging is the record of the files staged to remote hosts and their
	// hashes as each host saw them (two-host runs); nil otherwise.
	Staging *StageReport
}

// QualificationDir is the archive subdirectory of the qualification pass.
const QualificationDir = "qualification"

// CaseLess orders cases by path, then transport, then protocol, then system
// (goblin first, then its peers).
func CaseLess(a, b Case) bool {
	if a.Path != b.Path {
		return a.Path < b.Path
	}
	ta, tb := indexOf(AllTransports, a.Transport), indexOf(AllTransports, b.Transport)
	if ta != tb {
		return ta < tb
	}
	sa, sb := indexOf(systemOrder, a.System), indexOf(systemOrder, b.System)
	if sa != sb {
		return sa < sb
	}
	return protoRank(a.Protocol) < protoRank(b.Protocol)
}

var systemOrder = []string{SysGoblin, SysRedis, SysAeronGo, SysAeronRaw, SysUDPFloor, SysShmFloor}

func protoRank(p Protocol) int {
	switch p {
	case SBE:
		return 0
	case RESP:
		return 1
	}
	return 2
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return len(list)
}

// StageReport records what was staged where and the hashes each host saw.
type StageReport struct {
	Dirs   map[string]string // staging directory by role
	Shared bool
	Files  []StagedFile
	// Seen is sha256sum's output on each host, by role; Build is the
	// same for the files on this machine.
	Seen  map[string]string
	Build string
}

// StagedFile is one staged file and the hash of its build.
type StagedFile struct {
	Tool   string
	Name   string // its name in the staging directory
	SHA256 string
}

// Metadata is the ordered list of facts metadata.txt records.
type Metadata []KV

// KV is one metadata line.
type KV struct{ Key, Value string }

// Get returns the value of key, or "".
func (m Metadata) Get(key string) string {
	for _, kv := range m {
		if kv.Key == key {
			return kv.Value
		}
	}
	return ""
}

// HostFacts is what the archive records about one side's host: kernel,
// CPU, governor, load, and the interface, driver, speed and NUMA node of
// the NIC each path's address is on.
type HostFacts struct {
	Role  string // server or client
	Host  string // Host.Describe()
	Facts Metadata
}
