package review

import (
	"path/filepath"
	"strings"
)

// Gate decides whether an agent may run the shell command cmd in status s:
// a "party review request" needs fresh critic evidence, a "party review
// approve" needs a review that ran and wrote valid findings. A "party
// evidence add critic" earlier in the same command line counts, since it
// runs first ("party evidence add critic && party review request"). It
// returns the reason for a denial, or "" to allow. Gate is the first layer
// of the defense; the coordinator checks the same facts again when the
// signal arrives.
func Gate(s Status, cmd string) string {
	critic := s.Fresh(Critic)
	for _, args := range partyCommands(cmd) {
		switch {
		case len(args) >= 3 && args[0] == "evidence" && args[1] == "add" && args[2] == string(Critic):
			critic = true
		case len(args) >= 2 && args[0] == "review" && args[1] == "request":
			if !critic {
				return "party review request needs fresh critic evidence: run the code-critic (and minimizer), record them with 'party evidence add critic', then request the review"
			}
		case len(args) >= 2 && args[0] == "review" && args[1] == "approve":
			if approvable(s) != nil {
				return "party review approve needs a review that ran and wrote valid findings for the current code; request one with 'party review request'"
			}
		}
	}
	return ""
}

// CodeEdit says whether an agent's edit of path changes the work under
// review in the repository at root: files outside it, notes (.md) and logs
// (.log, .jsonl) do not.
func CodeEdit(path, root string) bool {
	rel, err := filepath.Rel(root, path)
	if path == "" || root == "" || err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return false
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".md", ".log", ".jsonl":
		return false
	}
	return true
}

// partyCommands finds every party command that cmd runs, in order, as its
// arguments after the global flags: party at a command position (start,
// or after ;, &, |, (, a newline or "then"/"do"), under any path. Each
// command's arguments end at the next operator.
func partyCommands(cmd string) [][]string {
	var out [][]string
	words := shellWords(cmd)
	for i := 0; i < len(words); i++ {
		if i > 0 && !commandStart(words[i-1]) {
			continue
		}
		if filepath.Base(words[i]) != "party" {
			continue
		}
		j := i + 1
		for j < len(words) && strings.HasPrefix(words[j], "-") {
			if flagTakesValue(words[j]) {
				j++
			}
			j++
		}
		// Arguments up to the next operator, flags (and their values)
		// left out: "review --json approve" is "review approve".
		var args []string
		for k := j; k < len(words) && !operator(words[k]); k++ {
			switch {
			case flagTakesValue(words[k]):
				k++
			case !strings.HasPrefix(words[k], "-"):
				args = append(args, words[k])
			}
		}
		out = append(out, args)
	}
	return out
}

// operator says whether a word of shellWords ends a simple command.
func operator(w string) bool {
	switch w {
	case ";", "&&", "||", "|", "&", "(", ")", "\n", "{", "}", "$(", "`":
		return true
	}
	return false
}

func commandStart(prev string) bool {
	switch prev {
	case ";", "&&", "||", "|", "&", "(", "\n", "then", "do", "else", "!", "{", "$(", "`":
		return true
	}
	return strings.Contains(prev, "=") && !strings.HasPrefix(prev, "-") // VAR=x party ...
}

func flagTakesValue(f string) bool {
	switch f {
	case "-L", "-S", "--socket", "--socket-path", "--session", "--base", "--title", "--to":
		return true
	}
	return false
}

// shellWords splits cmd into words and operators the way a shell would,
// well enough to find commands: quotes are removed, operators are words.
func shellWords(cmd string) []string {
	var (
		out   []string
		cur   strings.Builder
		inTok bool
		quote byte
	)
	flush := func() {
		if inTok {
			out = append(out, cur.String())
			cur.Reset()
			inTok = false
		}
	}
	for i := 0; i < len(cmd); i++ {
		c := cmd[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, inTok = c, true
		case c == '\\' && i+1 < len(cmd):
			i++
			if cmd[i] != '\n' {
				cur.WriteByte(cmd[i])
				inTok = true
			}
		case c == ' ' || c == '\t':
			flush()
		case c == '\n' || c == ';' || c == '(' || c == ')' || c == '`' || c == '{' || c == '}':
			flush()
			out = append(out, string(c))
		case c == '$' && i+1 < len(cmd) && cmd[i+1] == '(':
			flush()
			out = append(out, "$(")
			i++
		case c == '&' || c == '|':
			flush()
			if i+1 < len(cmd) && cmd[i+1] == c {
				out = append(out, string([]byte{c, c}))
				i++
			} else {
				out = append(out, string(c))
			}
		default:
			cur.WriteByte(c)
			inTok = true
		}
	}
	flush()
	return out
}
