package docs_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

const module = "github.com/goblin-kv/goblin"

// snippetImports are the packages a snippet may use by their names; a
// snippet imports those it names.
var snippetImports = map[string]string{
	"context": "context", "errors": "errors", "fmt": "fmt", "log": "log", "time": "time", "http": "net/http",
	"os": "os", "client": module + "/client", "target": module + "/target", "transport": module + "/transport",
	"ring": module + "/transport/ring", "aeron": module + "/aeron", "javadriver": module + "/aeron/javadriver",
	"resp": module + "/proto/resp", "sbe": module + "/proto/sbe", "server": module + "/server",
	"store": module + "/store", "request": module + "/request", "reply": module + "/reply",
	"argv": module + "/proto/argv", "command": module + "/command", "acl": module + "/acl",
}

var (
	qualifiedRe = regexp.MustCompile(`\b([a-z]\w*)\.[A-Z]`)
	// elisionRe matches the "..." a snippet leaves for the reader's code:
	// "{ ... }", "; ... }" and lines of nothing else.
	elisionRe     = regexp.MustCompile(`([{;])\s*(\.\.\.|…)\s*}`)
	elisionLineRe = regexp.MustCompile(`(?m)^\s*(\.\.\.|…)\s*$`)
	undefinedRe   = regexp.MustCompile(`^undefined: \w+$`)
)

// TestDocGoSnippets type-checks every Go block of README.md and docs/*.md
// against the packages it uses, as they are now: a call with the wrong
// arguments, a missing function, field or method fails. A snippet is a
// fragment, so the names it leaves to the reader (ctx, buf, msg, ...) and
// the "..." it leaves for the reader's code are allowed, and so are
// variables it declares and does not use.
func TestDocGoSnippets(t *testing.T) {
	root := testproc.Root(t)
	var snippets []block
	used := map[string]bool{}
	for _, b := range readBlocks(t, root) {
		if b.lang != "go" {
			continue
		}
		if b.skip != "" {
			t.Logf("%s not checked: %s", b.where(), b.skip)
			continue
		}
		snippets = append(snippets, b)
		for _, m := range qualifiedRe.FindAllStringSubmatch(strings.Join(b.lines, "\n"), -1) {
			if p, ok := snippetImports[m[1]]; ok {
				used[p] = true
			}
		}
		_, own, _ := splitImports(strings.Join(b.lines, "\n"))
		for _, p := range own {
			used[p] = true
		}
	}
	if len(snippets) == 0 {
		t.Fatal("no Go snippets found")
	}
	imp := exportImporter(t, root, used)
	for _, b := range snippets {
		t.Run(b.where(), func(t *testing.T) {
			for _, e := range checkSnippet(imp, b) {
				t.Errorf("%s", e)
			}
		})
	}
}

// importPathRe matches the quoted path of an import line.
var importPathRe = regexp.MustCompile(`"([^"]+)"`)

// splitImports separates the import declarations a snippet starts with
// (such as a blank import that links a transport) from the rest, and
// returns the paths they import.
func splitImports(src string) (decls string, paths []string, rest string) {
	lines := strings.Split(src, "\n")
	i, inBlock := 0, false
	for ; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		switch {
		case inBlock:
			inBlock = l != ")"
		case l == "import (":
			inBlock = true
		case strings.HasPrefix(l, "import "), l == "":
		default:
			return strings.Join(lines[:i], "\n"), paths, strings.Join(lines[i:], "\n")
		}
		if m := importPathRe.FindStringSubmatch(l); m != nil && l != "import (" {
			paths = append(paths, m[1])
		}
	}
	return src, paths, ""
}

// snippetSource makes a Go file of a snippet: its own imports and
// declarations stay at the top level, statements go into a function body.
func snippetSource(b block) (string, bool) {
	own, ownPaths, src := splitImports(strings.Join(b.lines, "\n"))
	src = elisionRe.ReplaceAllString(src, "$1 }")
	src = elisionLineRe.ReplaceAllString(src, "")
	var imports []string
	seen := map[string]bool{}
	for _, p := range ownPaths {
		seen[p] = true
	}
	for _, m := range qualifiedRe.FindAllStringSubmatch(src, -1) {
		if p, ok := snippetImports[m[1]]; ok && !seen[p] {
			seen[p] = true
			imports = append(imports, fmt.Sprintf("%q", p))
		}
	}
	slices.Sort(imports)
	head := "package snippet\n\nimport (\n" + strings.Join(imports, "\n") + "\n)\n" + own + "\n\n"
	if _, err := parser.ParseFile(token.NewFileSet(), "", head+src, 0); err == nil {
		return head + src, true
	}
	// Statements: inside a block of their own, so a snippet may declare
	// ctx itself or leave it to the reader.
	return head + "func _() {\n{\n" + src + "\n}\n}\n", false
}

// checkSnippet type-checks one snippet and returns its errors, the
// fragment's allowances left out.
func checkSnippet(imp types.Importer, b block) []string {
	src, _ := snippetSource(b)
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, b.where()+".go", src, 0)
	if err != nil {
		return []string{fmt.Sprintf("%s: does not parse as Go: %v\n%s", b.where(), err, src)}
	}
	var errs []string
	conf := types.Config{Importer: imp, Error: func(err error) {
		var te types.Error
		if errors.As(err, &te) && (te.Soft || undefinedRe.MatchString(te.Msg)) {
			return
		}
		errs = append(errs, fmt.Sprintf("%s: %v", b.where(), err))
	}}
	_, _ = conf.Check("snippet", fset, []*ast.File{f}, nil)
	if len(errs) > 0 {
		errs = append(errs, "the snippet as checked:\n"+src)
	}
	return errs
}

// exportImporter imports packages from the compiler's export data, which
// go list -export builds.
func exportImporter(t *testing.T, root string, used map[string]bool) types.Importer {
	t.Helper()
	var pkgs []string
	for p := range used {
		pkgs = append(pkgs, p)
	}
	cmd := exec.Command(goTool(), append([]string{"list", "-export", "-deps", "-json=ImportPath,Export"}, pkgs...)...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list -export: %v\n%s", err, ee.Stderr)
		}
		t.Fatal(err)
	}
	exports := map[string]string{}
	for dec := json.NewDecoder(strings.NewReader(string(out))); ; {
		var p struct{ ImportPath, Export string }
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		exports[p.ImportPath] = p.Export
	}
	return importer.ForCompiler(token.NewFileSet(), "gc", func(path string) (io.ReadCloser, error) {
		if e := exports[path]; e != "" {
			return os.Open(e)
		}
		return nil, fmt.Errorf("no export data for %s", path)
	})
}

// goTool is the go command, $GO when set (as testproc uses it).
func goTool() string {
	if g := os.Getenv("GO"); g != "" {
		return g
	}
	return "go"
}
