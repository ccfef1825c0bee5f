package golden

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Update rewrites golden files instead of comparing with them.
var Update = flag.Bool("update", false, "rewrite golden files")

// Dir returns the directory of the golden files (this package's directory).
func Dir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "golden"
	}
	return filepath.Dir(file)
}

var rules = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`), "<TIME>"},
	{regexp.MustCompile(`\b\d\d:\d\d:\d\d(\.\d+)?\b`), "<TIME>"},
	{regexp.MustCompile(`PARTY_DONE_( immediately followed by )?[a-z2-9]{12}\b`), "PARTY_DONE_$1<NONCE>"},
	{regexp.MustCompile(`\b\d{2,4}x\d{2,4}\b`), "<SIZE>"},
	{regexp.MustCompile(`\btk-[a-z2-9]{8}\b`), "tk-<TASK>"},
	{regexp.MustCompile(`%\d+\b`), "%N"},
	{regexp.MustCompile(`@\d+\b`), "@N"},
	{regexp.MustCompile(`\b[0-9a-f]{8,}\b`), "<HEX>"},
	{regexp.MustCompile(`\b(\d+h )?(\d+m )?\d+(\.\d+)?(ms|s)\b`), "<DUR>"},
	// Agents' transcript paths name the temporary working directory.
	{regexp.MustCompile(` transcript="[^"\n]*"?`), ` transcript="<PATH>"`},
}

// Normalize returns s with volatile parts replaced by placeholders, trailing
// spaces of each line and trailing blank lines removed, and control bytes
// other than tab and newline escaped as \xNN.
func Normalize(s string) string {
	for _, r := range rules {
		s = r.re.ReplaceAllString(s, r.with)
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(escape(l), " \u00a0")
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n") + "\n"
}

func escape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x20 && r != '\t' || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// TB is the part of testing.TB that Assert needs.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
}

// Assert compares the normalized got with the golden file name (a path
// relative to Dir), or rewrites the file when -update is set.
func Assert(t TB, name string, got string) {
	t.Helper()
	if err := Check(name, got, *Update); err != nil {
		t.Fatalf("%v", err)
	}
}

// Check is Assert returning an error, for harnesses without a testing.TB.
func Check(name, got string, update bool) error {
	path := filepath.Join(Dir(), name)
	norm := Normalize(got)
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		return os.WriteFile(path, []byte(norm), 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("golden %s: %w (run with -update to create it)", name, err)
	}
	if string(want) == norm {
		return nil
	}
	return fmt.Errorf("golden %s differs (run with -update to accept):\n%s", name, diff(string(want), norm))
}

// diff shows the lines that differ, want first.
func diff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d:\n  got:  %s\n  want: %s\n", i+1, strconv.Quote(gl), strconv.Quote(wl))
		}
	}
	return b.String()
}
