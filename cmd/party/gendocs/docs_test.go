package main

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// repoRoot is the repository, seen from this package.
const repoRoot = "../../.."

// TestDesignNamesEveryPackage holds the package table of docs/design.md
// (§1.2) to the tree: a line for every directory with Go files, and no
// line for a package that is gone.
func TestDesignNamesEveryPackage(t *testing.T) {
	table := designPackages(t)
	require.NotEmpty(t, table, "docs/design.md: no package table found under its Packages heading")
	tree := goPackages(t)
	require.Contains(t, tree, "core/party", "walked %s and missed core/party", repoRoot)
	for _, p := range tree {
		if !table[p] {
			t.Errorf("docs/design.md §1.2 has no line for package %s: add one saying what it is for", p)
		}
	}
	have := map[string]bool{}
	for _, p := range tree {
		have[p] = true
	}
	for p := range table {
		if !have[p] {
			t.Errorf("docs/design.md §1.2 names %s, which is no package: remove or rename its line", p)
		}
	}
}

// designPackages reads the first cell of each row of the table under the
// Packages heading of docs/design.md.
func designPackages(t *testing.T) map[string]bool {
	t.Helper()
	f, err := os.Open(filepath.Join(docsDir, "design.md"))
	require.NoError(t, err)
	defer f.Close()
	row := regexp.MustCompile("^\\| `([a-z0-9/._-]+)` \\|")
	pkgs := map[string]bool{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			in = strings.HasSuffix(line, " Packages")
			continue
		}
		if m := row.FindStringSubmatch(line); in && m != nil {
			pkgs[m[1]] = true
		}
	}
	require.NoError(t, sc.Err())
	return pkgs
}

// goPackages lists the directories of the module that hold Go files, as
// paths from the repository's root.
func goPackages(t *testing.T) []string {
	t.Helper()
	seen := map[string]bool{}
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != repoRoot && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "bin" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".go") {
			rel, err := filepath.Rel(repoRoot, filepath.Dir(path))
			if err != nil {
				return err
			}
			seen[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	require.NoError(t, err)
	pkgs := make([]string, 0, len(seen))
	for p := range seen {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	return pkgs
}

var (
	// citation is a reference from code into docs/: a page, and maybe a
	// numbered section of it (docs/agents-reference.md §4.1).
	citation = regexp.MustCompile(`docs/([a-z0-9/_-]+\.md)(?: §(\d+(?:\.\d+)*))?`)
	// numbered is a numbered heading: "## 4. Completion", "### 4.1 Claude".
	numbered = regexp.MustCompile(`^#{1,6} (\d+(?:\.\d+)*)\.? `)
	// gone names the reference pages that lived outside the repository
	// before docs/ (spelt in two halves so this file does not cite them).
	gone = regexp.MustCompile(`DESIGN` + `\.md|AGENTS` + `-REFERENCE|TMUX` + `-NOTES`)
)

// TestCitationsResolve holds every citation of docs/ in the Go code to a
// page and a numbered heading that exist, and refuses a § that names no
// page and the old pages outside the repository.
func TestCitationsResolve(t *testing.T) {
	headings := map[string]map[string]bool{}
	sections := func(page string) map[string]bool {
		if h, ok := headings[page]; ok {
			return h
		}
		h := map[string]bool{}
		b, err := os.ReadFile(filepath.Join(docsDir, filepath.FromSlash(page)))
		if err != nil {
			headings[page] = nil
			return nil
		}
		for _, line := range strings.Split(string(b), "\n") {
			if m := numbered.FindStringSubmatch(line); m != nil {
				h[m[1]] = true
			}
		}
		headings[page] = h
		return h
	}
	cited := 0
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != repoRoot && (strings.HasPrefix(d.Name(), ".") || d.Name() == "bin" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || d.Name() == "docs_test.go" && filepath.Base(filepath.Dir(path)) == "gendocs" {
			return nil // this file spells out the rules it checks
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repoRoot, path)
		for i, line := range strings.Split(string(b), "\n") {
			where := filepath.ToSlash(rel) + ":" + strconv.Itoa(i+1)
			if gone.MatchString(line) {
				t.Errorf("%s cites a page that is not in the repository: cite docs/ instead: %s", where, strings.TrimSpace(line))
			}
			rest := line
			for _, m := range citation.FindAllStringSubmatchIndex(line, -1) {
				page := line[m[2]:m[3]]
				h := sections(page)
				switch {
				case h == nil:
					t.Errorf("%s cites docs/%s, which does not exist", where, page)
				case m[4] >= 0 && !h[line[m[4]:m[5]]]:
					t.Errorf("%s cites docs/%s §%s: the page has no heading numbered %s", where, page, line[m[4]:m[5]], line[m[4]:m[5]])
				}
				if m[4] >= 0 {
					cited++
				}
				rest = strings.Replace(rest, line[m[0]:m[1]], "", 1)
			}
			if strings.Contains(rest, "§") {
				t.Errorf("%s has a § that names no page of docs/ (write docs/PAGE.md §N): %s", where, strings.TrimSpace(line))
			}
		}
		return nil
	})
	require.NoError(t, err)
	assert.GreaterOrEqual(t, cited, 5, "found only %d section citations in the code: is the walk right?", cited)
}

// pending are pages README links to that other branches write; the link
// check lets them be missing until they land.
var pending = map[string]bool{"docs/dashboard.md": true, "docs/iterm.md": true, "docs/notifications.md": true}

// TestDocLinksResolve holds every relative link of README.md and docs/ to
// a file that exists and, with an #anchor, to one of its headings.
func TestDocLinksResolve(t *testing.T) {
	pages := []string{"README.md"}
	err := filepath.WalkDir(docsDir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			rel, _ := filepath.Rel(repoRoot, path)
			pages = append(pages, filepath.ToSlash(rel))
		}
		return err
	})
	require.NoError(t, err)
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	checked := 0
	for _, page := range pages {
		b, err := os.ReadFile(filepath.Join(repoRoot, page))
		require.NoError(t, err)
		for _, m := range link.FindAllStringSubmatch(withoutCode(string(b)), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			to := page
			if file != "" {
				to = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(page), file)))
			}
			checked++
			body, err := os.ReadFile(filepath.Join(repoRoot, to))
			if err != nil {
				if !pending[to] {
					t.Errorf("%s links to %s, which does not exist", page, target)
				}
				continue
			}
			if anchor != "" && strings.HasSuffix(to, ".md") && !anchors(string(body))[anchor] {
				t.Errorf("%s links to %s: %s has no heading with the anchor #%s", page, target, to, anchor)
			}
		}
	}
	assert.Greater(t, checked, 20, "checked only %d links", checked)
}

// TestReadmeIsShort keeps README.md a page a newcomer reads: the reference
// belongs in docs/.
func TestReadmeIsShort(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	require.NoError(t, err)
	assert.Less(t, len(b), 15000, "README.md is %d bytes: move reference material into docs/", len(b))
	assert.Contains(t, string(b), "make test", "README.md must name the test command")
}

// anchors are the GitHub anchors of the headings of a Markdown page.
func anchors(page string) map[string]bool {
	a := map[string]bool{}
	for _, line := range strings.Split(withoutCode(page), "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		text := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(text) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-':
				b.WriteRune(r)
			case r == ' ':
				b.WriteRune('-')
			}
		}
		a[b.String()] = true
	}
	return a
}

// withoutCode is a Markdown page without its fenced code blocks.
func withoutCode(page string) string {
	var b strings.Builder
	fenced := false
	for _, line := range strings.Split(page, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}
