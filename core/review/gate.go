package review

import (
	"path/filepath"
	"strings"

	"github.com/partyhq/party/core/shellwords"
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

// partyCommands finds every party command that the bash script cmd runs
// (see shellwords.Commands), under any path, in order, as its arguments
// without flags and their values: "party -L x review --json approve" is
// "review approve".
func partyCommands(cmd string) [][]string {
	var out [][]string
	for _, words := range shellwords.Commands(cmd) {
		if filepath.Base(words[0]) != "party" {
			continue
		}
		var args []string
		for k := 1; k < len(words); k++ {
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

func flagTakesValue(f string) bool {
	switch f {
	case "-L", "-S", "--socket", "--socket-path", "--session", "--base", "--title", "--to":
		return true
	}
	return false
}
