package script

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/partyhq/party/core/config"
)

// Step is one action of a rule.
type Step struct {
	Kind  string // think, say, echo, flood, marker, write, run, permission, fail, crash, hang, freeze, usage
	Arg   string
	Dur   time.Duration
	Code  int
	Size  int64  // flood
	Usage *Usage // usage
}

// Rule answers the prompts it matches.
type Rule struct {
	match func(string) ([]string, bool)
	Steps []Step
}

// Script is a parsed answer script.
type Script struct{ Rules []Rule }

// Error is a script that cannot be parsed: where, and why.
type Error struct {
	File      string
	Line, Col int
	Msg       string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
}

// Load reads and parses the script at path.
func Load(path string) (*Script, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, string(b))
}

// Parse parses script text; name is used in errors.
func Parse(name, text string) (*Script, error) {
	s := &Script{}
	for i, raw := range strings.Split(text, "\n") {
		line := strings.TrimRight(raw, " \t\r")
		trimmed := strings.TrimLeft(line, " \t")
		col := len(line) - len(trimmed) + 1
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		fail := func(c int, f string, a ...any) error {
			return &Error{File: name, Line: i + 1, Col: c, Msg: fmt.Sprintf(f, a...)}
		}
		word, arg, _ := strings.Cut(trimmed, " ")
		arg = strings.TrimSpace(arg)
		argCol := col + len(word) + 1
		if word == "on" {
			if col != 1 {
				return nil, fail(col, "'on' starts a rule at the start of a line")
			}
			m, err := matcher(arg)
			if err != nil {
				return nil, fail(argCol, "%v", err)
			}
			s.Rules = append(s.Rules, Rule{match: m})
			continue
		}
		if len(s.Rules) == 0 {
			return nil, fail(col, "step %q before any 'on' rule", word)
		}
		st := Step{Kind: word, Arg: arg}
		switch word {
		case "think":
			d, err := config.ParseDuration(arg)
			if err != nil {
				return nil, fail(argCol, "think: %v", err)
			}
			st.Dur = d
		case "crash":
			st.Code = 1
			if arg != "" {
				n, err := strconv.Atoi(arg)
				if err != nil || n < 0 || n > 255 {
					return nil, fail(argCol, "crash: exit status %q is not 0-255", arg)
				}
				st.Code = n
			}
		case "say":
			st.Arg = unescape(arg)
		case "flood":
			n, err := parseSize(arg)
			if err != nil {
				return nil, fail(argCol, "flood: %v", err)
			}
			st.Size = n
		case "write":
			if p, _, _ := strings.Cut(arg, " "); p == "" {
				return nil, fail(argCol, "write needs PATH and TEXT")
			}
		case "tool":
			name, in, _ := strings.Cut(arg, " ")
			if name == "" {
				return nil, fail(argCol, "tool needs a NAME")
			}
			if in = strings.TrimSpace(in); in != "" {
				var m map[string]any
				if err := json.Unmarshal([]byte(in), &m); err != nil {
					return nil, fail(argCol+len(name)+1, "tool %s: arguments are not a JSON object: %v", name, err)
				}
			}
		case "run":
			if arg == "" {
				return nil, fail(argCol, "run needs a command")
			}
		case "permission", "fail":
			if arg == "" {
				return nil, fail(argCol, "%s needs an argument", word)
			}
		case "usage":
			u, off, err := parseUsage(arg)
			if err != nil {
				return nil, fail(argCol+off, "%v", err)
			}
			st.Usage = u
		case "echo", "marker", "hang", "freeze":
		default:
			return nil, fail(col, "unknown step %q", word)
		}
		last := &s.Rules[len(s.Rules)-1]
		last.Steps = append(last.Steps, st)
	}
	return s, nil
}

func matcher(arg string) (func(string) ([]string, bool), error) {
	switch {
	case arg == "*":
		return func(p string) ([]string, bool) { return []string{p}, true }, nil
	case len(arg) >= 2 && arg[0] == '/' && arg[len(arg)-1] == '/':
		re, err := regexp.Compile(arg[1 : len(arg)-1])
		if err != nil {
			return nil, err
		}
		return func(p string) ([]string, bool) {
			m := re.FindStringSubmatch(p)
			if m == nil {
				return nil, false
			}
			m[0] = p
			return m, true
		}, nil
	case len(arg) >= 2 && arg[0] == '"' && arg[len(arg)-1] == '"':
		sub := arg[1 : len(arg)-1]
		return func(p string) ([]string, bool) { return []string{p}, strings.Contains(p, sub) }, nil
	}
	return nil, fmt.Errorf("want /regexp/, \"substring\" or *, got %q", arg)
}

// parseSize reads a size: bytes, or a number with KB or MB (1024s).
func parseSize(s string) (int64, error) {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "MB"):
		s, mult = strings.TrimSuffix(s, "MB"), 1<<20
	case strings.HasSuffix(s, "KB"):
		s, mult = strings.TrimSuffix(s, "KB"), 1<<10
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("size %q is not bytes, KB or MB", s)
	}
	return n * mult, nil
}

// unescape reads the escapes of say and write text: \n, \t, \\ and \xHH
// (one byte, e.g. \x1b for ESC, \xc2\x9b for U+009B); any other
// backslash is itself.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '\\':
			b.WriteByte('\\')
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'x':
			if i+4 > len(s) {
				b.WriteByte(s[i])
				continue
			}
			n, err := strconv.ParseUint(s[i+2:i+4], 16, 8)
			if err != nil {
				b.WriteByte(s[i])
				continue
			}
			b.WriteByte(byte(n))
			i += 2
		default:
			b.WriteByte(s[i])
			continue
		}
		i++
	}
	return b.String()
}

// defaultSteps answer a prompt no rule matched.
func defaultSteps(prompt string) []Step {
	first, _, _ := strings.Cut(prompt, "\n")
	if r := []rune(first); len(r) > 40 {
		first = string(r[:40]) + "…"
	}
	return []Step{{Kind: "think", Dur: 300 * time.Millisecond}, {Kind: "say", Arg: fmt.Sprintf("Mock reply to %q.", first)}}
}

// Plan returns the steps for prompt and the rule's groups.
func (s *Script) Plan(prompt string) ([]Step, []string) {
	if s != nil {
		for _, r := range s.Rules {
			if groups, ok := r.match(prompt); ok {
				return r.Steps, groups
			}
		}
	}
	return defaultSteps(prompt), []string{prompt}
}

// Matches reports whether a rule of the script matches prompt.
func (s *Script) Matches(prompt string) bool {
	if s == nil {
		return false
	}
	for _, r := range s.Rules {
		if _, ok := r.match(prompt); ok {
			return true
		}
	}
	return false
}

var groupRef = regexp.MustCompile(`\$(\d)`)

var markerRequest = regexp.MustCompile(`PARTY_DONE_ immediately followed by ([a-z0-9]+)`)

// MarkerNonce returns the nonce of party's completion marker when prompt
// asks for one (the marker step answers "PARTY_DONE_" + nonce).
func MarkerNonce(prompt string) (string, bool) {
	m := markerRequest.FindStringSubmatch(prompt)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// ToolArgs is the tool name and the JSON object of arguments of a tool
// step ({} when it gives none), with $0..$9 replaced by the rule's groups
// in the arguments.
func (s Step) ToolArgs(groups []string) (name string, input map[string]any) {
	name, in, _ := strings.Cut(s.Arg, " ")
	input = map[string]any{}
	if in = strings.TrimSpace(in); in != "" {
		_ = json.Unmarshal([]byte(Expand(in, groups)), &input)
	}
	return name, input
}

// WriteArgs is the path and the text of a write step, with the text's
// escapes read and $0..$9 replaced by the rule's groups in both.
func (s Step) WriteArgs(groups []string) (path, text string) {
	path, text, _ = strings.Cut(s.Arg, " ")
	return Expand(path, groups), Expand(unescape(text), groups)
}

// Expand replaces $0..$9 in s with a rule's groups, as say and write do.
func Expand(s string, groups []string) string {
	return groupRef.ReplaceAllStringFunc(s, func(m string) string {
		n := int(m[1] - '0')
		if n < len(groups) {
			return groups[n]
		}
		return ""
	})
}
