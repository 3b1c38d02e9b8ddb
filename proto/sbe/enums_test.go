package sbe

import (
	"encoding/xml"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	pathpkg "path"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto/sbe/goblinsbe"
)

// The Go types whose values travel on the SBE wire as themselves, and how
// their constants' names differ from the schema's enum values' names.
//
// A name not listed in a renamed map must equal the schema's name ignoring
// case once the prefix is dropped (OpSetNX is setNx). The schema spells a
// value differently where the plain word is a keyword in a language the SBE
// tool generates for (its ValidationUtil keyword lists, which
// proto/sbe/generate.sh makes fatal with sbe.validation.warnings.fatal):
// type, select, append, copy and object; nil and error; map, double and
// boolean.
var (
	opRenamed = map[string]string{
		"OpType": "keyType", "OpSelect": "selectDb", "OpAppend": "appendValue", "OpCopy": "copyKey",
		"OpObject": "objectCommand",
	}
	kindRenamed = map[string]string{
		"Nil": "absent", "Error": "failure", "NilArray": "absentArray", "Map": "keyValueMap",
		"Double": "doubleText", "Boolean": "booleanValue",
	}
	// opNotInSchema are the Ops that never travel over SBE: OpNone, the
	// zero value, which is no command (the schema's null Op is 255); and
	// cluster mode's commands, which are RESP only (command/table.go).
	opNotInSchema = names("OpNone",
		"OpCluster", "OpClusterSlots", "OpClusterShards", "OpClusterNodes", "OpClusterMyID",
		"OpClusterMyShardID", "OpClusterInfo", "OpClusterKeySlot", "OpClusterCountKeysInSlot",
		"OpClusterGetKeysInSlot", "OpClusterCountFailureReports", "OpClusterSetSlot", "OpClusterHelp",
		"OpClusterSaveConfig", "OpClusterReload", "OpClusterAddSlots", "OpClusterAddSlotsRange",
		"OpClusterDelSlots", "OpClusterMeet", "OpClusterForget", "OpClusterReplicate", "OpClusterFailover",
		"OpClusterReset", "OpAsking", "OpReadOnly", "OpReadWrite", "OpMigrate", "OpRestoreAsking",
		"OpClusterTargets",
		// Above sbe.MaxOp: RESP only until the schema carries them.
		"OpSave", "OpBgSave", "OpShutdown",
		"OpSync", "OpPSync", "OpReplConf", "OpRole")
	// kindStringShort are the kinds whose String is the plain word, not
	// the schema's longer spelling (client errors print it).
	kindStringShort = map[command.Kind]string{command.Map: "map", command.Double: "double", command.Boolean: "boolean"}
)

func names(n ...string) map[string]bool {
	m := map[string]bool{}
	for _, s := range n {
		m[s] = true
	}
	return m
}

// TestEnumsMatchSchema pins command.Op, command.Expiry, command.Kind and
// command.Status to the schema's enums, both ways: every Go constant is the
// schema's value of the same name (or is a listed exception), and every
// schema value is a Go constant. It also checks that the generated code's
// lookups know exactly the schema's values, so a schema edited without
// `make generate` fails here too.
func TestEnumsMatchSchema(t *testing.T) {
	schema := readSchemaEnums(t, filepath.Join("..", "..", "schemas", "goblin.xml"))
	consts := goConsts(t, filepath.Join("..", "..", "command"))

	gen := map[string]map[uint64]string{"Op": {}, "Expiry": {}, "Kind": {}, "Status": {}}
	for v := 0; v < 255; v++ { // 255 is each enum's NULL_VALUE
		if o, err := goblinsbe.LookupOp(uint8(v)); err == nil {
			gen["Op"][uint64(v)] = o.String()
		}
		if e, err := goblinsbe.LookupExpiry(uint8(v)); err == nil {
			gen["Expiry"][uint64(v)] = e.String()
		}
		if k, err := goblinsbe.LookupKind(uint8(v)); err == nil {
			gen["Kind"][uint64(v)] = k.String()
		}
		if s, err := goblinsbe.LookupStatus(uint8(v)); err == nil {
			gen["Status"][uint64(v)] = s.String()
		}
	}

	for _, c := range []struct {
		enum, prefix string
		consts       map[string]uint64
		renamed      map[string]string
		notInSchema  map[string]bool
	}{
		{"Op", "Op", consts["Op"], opRenamed, opNotInSchema},
		{"Expiry", "Expiry", consts["Expiry"], nil, nil},
		{"Kind", "", consts["Kind"], kindRenamed, nil},
		{"Status", "", consts["Status"], nil, nil},
	} {
		t.Run(c.enum, func(t *testing.T) {
			byValue := schema[c.enum]
			if len(byValue) == 0 || len(c.consts) == 0 {
				t.Fatalf("found %d schema values and %d Go constants of %s: nothing to compare", len(byValue), len(c.consts), c.enum)
			}
			// The generated lookups are the schema's values, both ways.
			for v, name := range byValue {
				if g, ok := gen[c.enum][v]; !ok || g != name {
					t.Errorf("schema %s %s = %d; goblinsbe.Lookup%s(%d) gives %q (%v): run make generate", c.enum, name, v, c.enum, v, g, ok)
				}
			}
			for v, g := range gen[c.enum] {
				if _, ok := byValue[v]; !ok {
					t.Errorf("goblinsbe knows %s %s = %d, which schemas/goblin.xml does not: run make generate", c.enum, g, v)
				}
			}
			// Go constants to schema values.
			seen := map[uint64]string{}
			for _, goName := range sortedKeys(c.consts) {
				v := c.consts[goName]
				if other, dup := seen[v]; dup {
					t.Errorf("%s and %s are both %d", other, goName, v)
				}
				seen[v] = goName
				name, inSchema := byValue[v]
				if c.enum == "Op" && v > uint64(MaxOp) {
					continue // RESP only: above what the schema's Op can carry
				}
				if c.notInSchema[goName] {
					if inSchema {
						t.Errorf("%s = %d is listed as not in the schema, but the schema has %s %s = %d", goName, v, c.enum, name, v)
					}
					continue
				}
				want, renamed := c.renamed[goName]
				switch {
				case !inSchema:
					t.Errorf("%s = %d is not a value of the schema's %s enum (and not listed as an exception)", goName, v, c.enum)
				case renamed && name != want:
					t.Errorf("%s = %d: the schema names %d %q, the exception list %q", goName, v, v, name, want)
				case !renamed && !strings.EqualFold(strings.TrimPrefix(goName, c.prefix), name):
					t.Errorf("%s = %d, but the schema's %s %d is %q", goName, v, c.enum, v, name)
				}
			}
			for _, goName := range sortedKeys(c.renamed) {
				if _, ok := c.consts[goName]; !ok {
					t.Errorf("the exception list renames %s, which is not a %s constant", goName, c.enum)
				}
			}
			for goName := range c.notInSchema {
				if _, ok := c.consts[goName]; !ok {
					t.Errorf("the exception list leaves out %s, which is not a %s constant", goName, c.enum)
				}
			}
			// Schema values to Go constants.
			for v, name := range byValue {
				if _, ok := seen[v]; !ok {
					t.Errorf("the schema's %s %s = %d has no Go constant", c.enum, name, v)
				}
			}
			t.Logf("%d Go constants (%d listed as not in the schema), %d schema values", len(c.consts), len(c.notInSchema), len(byValue))
		})
	}

	// Status and Kind name themselves as the schema does (but for the
	// listed kinds).
	for v, name := range schema["Status"] {
		if got := command.Status(v).String(); got != name {
			t.Errorf("command.Status(%d).String() = %q, the schema's name is %q", v, got, name)
		}
	}
	for v, name := range schema["Kind"] {
		if short, ok := kindStringShort[command.Kind(v)]; ok {
			name = short
		}
		if got := command.Kind(v).String(); got != name {
			t.Errorf("command.Kind(%d).String() = %q, want %q", v, got, name)
		}
	}
}

// readSchemaEnums returns the schema's enums: enum name to value to value
// name.
func readSchemaEnums(t *testing.T, path string) map[string]map[uint64]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Enums []struct {
			Name   string `xml:"name,attr"`
			Values []struct {
				Name  string `xml:"name,attr"`
				Value string `xml:",chardata"`
			} `xml:"validValue"`
		} `xml:"types>enum"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	enums := map[string]map[uint64]string{}
	for _, e := range doc.Enums {
		m := map[uint64]string{}
		for _, v := range e.Values {
			n, ok := constant.Uint64Val(constant.MakeFromLiteral(strings.TrimSpace(v.Value), token.INT, 0))
			if !ok {
				t.Fatalf("%s: enum %s value %s is %q, not an unsigned integer", path, e.Name, v.Name, v.Value)
			}
			if other, dup := m[n]; dup {
				t.Fatalf("%s: enum %s gives %d to both %s and %s", path, e.Name, n, other, v.Name)
			}
			m[n] = v.Name
		}
		enums[e.Name] = m
	}
	return enums
}

// goConsts type-checks the Go package in dir (its non-test files) and
// returns its constants of each named type: type name to constant name to
// value.
func goConsts(t *testing.T, dir string) map[string]map[string]uint64 {
	t.Helper()
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	// Imports are empty packages and the errors they cause are ignored:
	// the constants read here are the package's own, which need no
	// import, and the compiler checks the rest. (CI time: the source
	// importer type-checked fmt and its standard-library tree again, 15 s
	// of the race run under load.) A constant that did need an import
	// would have no value, and fail below.
	conf := types.Config{
		Importer: emptyImporter{},
		Error:    func(error) {},
	}
	pkg, _ := conf.Check(dir, fset, files, nil)
	out := map[string]map[string]uint64{}
	for _, name := range pkg.Scope().Names() {
		c, ok := pkg.Scope().Lookup(name).(*types.Const)
		if !ok {
			continue
		}
		named, ok := c.Type().(*types.Named)
		if !ok || named.Obj().Pkg() != pkg {
			continue
		}
		v, ok := constant.Uint64Val(c.Val())
		if !ok {
			t.Fatalf("%s: constant %s = %v is not an unsigned integer", dir, name, c.Val())
		}
		tn := named.Obj().Name()
		if out[tn] == nil {
			out[tn] = map[string]uint64{}
		}
		out[tn][name] = v
	}
	return out
}

// emptyImporter gives every import as an empty, complete package.
type emptyImporter struct{}

func (emptyImporter) Import(path string) (*types.Package, error) {
	p := types.NewPackage(path, pathpkg.Base(path))
	p.MarkComplete()
	return p, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
