package exitcode

import (
	"sort"
	"strings"

	"github.com/partyhq/party/core/supervise"
)

// The words that document the error table (table.go) for docs/exit-codes.md,
// which cmd/party/gendocs writes from Exits, Codes and Classes. The table
// stays the one place where errors become exit codes; these only say what
// each exit status and code means. A code without words here is documented
// by the messages of its errors.

// exitMeanings says what each exit status means.
var exitMeanings = map[int]string{
	ExitOK:          "success",
	ExitError:       "error: the command could not do it (a session exists, a dialog on screen, a failed turn, a permission prompt, tmux failed or missing, an unsafe runtime directory, a corrupt or unavailable store)",
	ExitUsage:       "usage or config: an unknown command, bad flags or arguments, a socket path (`-S`) that is not a socket, a directory not linked to a team (`party pm init`), a text the agent would run as a command (`--raw`), what an agent wrote for a pane that runs no agent (`route.allowRoles`), invalid config, a config value out of bounds or a config file that cannot be read (a directory, over 1 MiB, a symlink loop, unreadable), an agent program missing, a session not determined, an empty message, a session name tmux would change, a settings file `hooks install` cannot write",
	ExitNotFound:    "not found or dead: a role, pane, session or server; a pane dead or not running its agent; a task, milestone or team; no coordinator or supervisor",
	ExitTimeout:     "timeout (the error shows the last screen); an agent that never showed its input box",
	ExitConflict:    "conflict: another talk is waiting on the agent (`--no-queue`); a review signal illegal in the current state; a task changed on GitHub since party wrote it (`--force` overrides); a name or id already taken",
	ExitUnconfirmed: "delivered, but the submission was not confirmed",
	ExitInputBusy:   "the agent's input box holds someone else's text (`--clear` removes it)",
	ExitFallback:    "the supervisor cannot trigger that pane (party did not start it): use `send` or `talk`",
	ExitBudget:      "the agent's budget is spent (`budget.*`): `--force --why TEXT` sends all the same, logged",
	ExitHost:        "another host cannot be reached over SSH (authentication, host key, timeout, refused), its connection broke while party ran there, or it has no party program there",
	ExitVersion:     "another host runs another party version, or one too old for the command: install the same party on both",
	ExitInterrupted: "interrupted (Ctrl-C)",
}

// codeMeanings says what each code of the error table means.
var codeMeanings = map[string]string{
	"ROLE_AMBIGUOUS":        "two or more panes carry the role",
	"ROLE_NOT_FOUND":        "no pane carries the role",
	"ROUTING_UNRESOLVED":    "the session's panes carry no roles and it is not the legacy two-pane session",
	"PANE_DEAD":             "the pane is dead",
	"AGENT_NOT_RUNNING":     "the pane does not run its agent",
	"DIALOG_ON_SCREEN":      "a dialog or completion menu is on screen (`--force` pastes anyway)",
	"UNCONFIRMED":           "Enter was pressed and never seen taken, or the text never showed in the box",
	"EMPTY_MESSAGE":         "nothing to send",
	"INPUT_NOT_EMPTY":       "the input box holds text that is not party's (`--clear`)",
	"AGENT_NOT_READY":       "the agent showed no input box within 30 s",
	"INTERPRETED_TEXT":      "the agent would run the text as a command (`--raw` sends it so on purpose)",
	"NOT_AN_AGENT":          "what an agent wrote would be typed into a pane that runs a shell or another program (`route.allowRoles`)",
	"TIMEOUT":               "the wait timed out (the error shows the last screen)",
	"TURN_FAILED":           "the agent's turn failed (an API error, a failed request)",
	"PERMISSION_PROMPT":     "the agent waits for a permission",
	"TURN_INTERRUPTED":      "the turn was interrupted, or a permission refused",
	"ANSWER_CUT":            "the marker came but the turn's start scrolled beyond `defaults.captureLines`, or nothing on screen places it",
	"AGENT_BUSY":            "another talk is waiting on the agent (`--no-queue`)",
	"NO_COORDINATOR":        "the session has no review coordinator",
	"NO_REVIEW":             "no review has run",
	"INVALID_FINDINGS":      "the findings do not follow the schema (`party review findings`); nothing was written",
	"EVIDENCE_MISSING":      "the evidence the signal needs is missing or stale",
	"FORBIDDEN":             "not allowed here: a review signal, a supervisor call a runtime may not make (unblock, force, another's work), or a send, talk, trigger or message to another host from inside an agent's pane",
	"USAGE":                 "a command, argument, flag or option used wrongly",
	"ILLEGAL_TRANSITION":    "the review signal is illegal in the current state",
	"BUDGET_EXCEEDED":       "a budget that bounds the agent (`budget.*`) is spent; `--force --why TEXT` overrides it, and the team's event log keeps why",
	"GIT_MISSING":           "git is not on PATH (party's worktrees need git 2.38 or later)",
	"NOT_A_REPOSITORY":      "`--worktree` in a folder outside any git repository",
	"BARE_REPOSITORY":       "`--worktree` in a bare repository: no working tree to branch from",
	"SUBMODULES":            "`--worktree` in a repository with submodules, which a worktree would leave empty",
	"BASE_NOT_FOUND":        "`--base` names no commit, branch or tag",
	"WORKTREE_TAKEN":        "a branch or folder a worktree needs is something else's; a worktree off its branch; the main worktree on another branch than the merge's; a live agent in the worktree to remove",
	"UNCOMMITTED_CHANGES":   "uncommitted work where a merge or a removal would lose it or merge it half-done",
	"UNMERGED":              "a worktree's branch has commits its base does not have (`party merge`, or `--force` to drop them)",
	"WORKTREE_SETUP_FAILED": "`worktree.setup` failed in a new worktree; the trees that start made are removed",
	"NO_WORKTREE":           "the role or team has no worktree (`party start --worktree`)",
	"CONFLICT":              "already running, a name or id already taken, a merge that conflicts (`party merge`: aborted, the files named), or a task changed on GitHub since party wrote it (`--json` lists the fields as `error.fields`)",
	"STALLED":               "a relay role gave no block in time",
	"OUT_OF_ROUNDS":         "the relay used its rounds",
	"SESSION_EXISTS":        "the session exists (`--replace`)",
	"SESSION_UNRESOLVED":    "no session given and more than one candidate",
	"AGENT_MISSING":         "an agent program is not on `PATH`",
	"NO_TEAM":               "no `.party/team.json` here or above (`party pm init`)",
	"NOT_FOUND":             "a task, milestone, team, repository, trigger or thread that does not exist",
	"STORE_CORRUPT":         "a store file that does not parse (named in the message), never reset",
	"STORE_UNAVAILABLE":     "the GitHub store cannot be reached (gh missing, refused, unreachable)",
	"CONFIG_INVALID":        "a config file or value that is invalid or out of bounds (`FILE:LINE:COL`)",
	"VERSION_MISMATCH":      "the host runs another party version (both versions are in the message)",
	"REMOTE_TOO_OLD":        "the party on the host lacks the command (an older party)",
	"HOST_AUTH_FAILED":      "ssh: the host refused the user's keys (`BatchMode`: never a password prompt)",
	"HOST_KEY_UNVERIFIED":   "ssh: the host's key is not in known_hosts, or changed",
	"HOST_TIMEOUT":          "ssh: the host did not answer within 5 s (`ConnectTimeout`)",
	"HOST_UNREACHABLE":      "ssh could not reach the host (refused, a name that does not resolve, another ssh failure)",
	"HOST_CONNECTION_LOST":  "the connection to the host broke while party ran there (`talk --wait`): what it started there goes on (`party check ROLE@HOST`)",
	"NO_PARTY_THERE":        "the host has no party program where `hosts.NAME.party` says (the remote shell's 127)",
	"REMOTE_FAILED":         "the party on the host ran and failed (its message)",
	"NO_SERVER":             "no tmux server runs there",
	"NO_SESSION":            "no such session",
	"NO_PANE":               "no such pane",
	"TMUX_MISSING":          "a program party runs (tmux) is not installed",
	"FALLBACK_REQUIRED":     "the supervisor cannot trigger a pane party did not start",
	"THREAD_AUTO_BLOCKED":   "the thread is blocked (alike answers, or turns without progress) until `party trigger unblock`",
	"BAD_TOKEN":             "a runtime token no runtime holds",
	"AGENT_CLI_FAILED":      "the agent's own command line (`claude mcp add`, `codex mcp get`) failed while `party mcp install` or `uninstall` used it: its message is shown",
	"NO_SUPERVISOR":         "the session's supervisor does not run",
	"INTERRUPTED":           "interrupted (Ctrl-C, SIGTERM)",
	"UNSAFE_RUNTIME_DIR":    "the runtime dir (sockets) is a symlink, not yours, or open to others",
	"SUPERVISOR_FAILED":     "the supervisor could not start, or its keeper gave up after a crash loop (`party supervise status` says why)",
	"ERROR":                 "any other error",
}

// classMeanings says what each class of a failed (or waiting) trigger
// means.
var classMeanings = map[supervise.Class]string{
	supervise.TargetNotFound:   "the runtime's pane is gone",
	supervise.PaneDead:         "the runtime's pane is dead",
	supervise.SendKeysError:    "delivering the trigger failed",
	supervise.AckTimeout:       "no acknowledgement after every ack window",
	supervise.OperatorBusy:     "deferred: an operator is busy in the pane",
	supervise.DeferTimeout:     "deferred longer than `supervise.maxDefer`",
	supervise.RegistryDrift:    "the runtime's record no longer matches tmux",
	supervise.RateLimited:      "deferred: the runtime's or thread's rate is used up",
	supervise.ThreadBlocked:    "the thread is auto-blocked",
	supervise.FallbackRequired: "party did not start the pane",
	supervise.AgentStalled:     "its agent stalled mid-turn (busy, no sign of life for `supervise.stallAfter`), and the fallback failed too",
}

// ExitDoc is one exit status as the documentation shows it: what it means
// and the codes that exit with it.
type ExitDoc struct {
	Exit    int
	Meaning string
	Codes   []string
}

// CodeDoc is one code of the error table as the documentation shows it.
type CodeDoc struct {
	Code    string
	Exit    int
	Meaning string
}

// Exits lists every exit status, in order, with the codes of the error
// table (and the trigger classes) that exit with it.
func Exits() []ExitDoc {
	byExit := map[int][]string{}
	seen := map[codeExit]bool{}
	add := func(code string, exit int) {
		if k := (codeExit{code, exit}); !seen[k] {
			seen[k] = true
			byExit[exit] = append(byExit[exit], code)
		}
	}
	for _, c := range Codes() {
		add(c.Code, c.Exit)
	}
	for _, c := range Classes() {
		add(c.Code, c.Exit)
	}
	exits := []int{ExitOK}
	for e := range exitMeanings {
		if e != ExitOK {
			exits = append(exits, e)
		}
	}
	for e := range byExit {
		if _, ok := exitMeanings[e]; !ok {
			exits = append(exits, e)
		}
	}
	sort.Ints(exits)
	docs := make([]ExitDoc, 0, len(exits))
	for _, e := range exits {
		docs = append(docs, ExitDoc{Exit: e, Meaning: exitMeanings[e], Codes: byExit[e]})
	}
	return docs
}

// Codes lists each code of the error table once per exit status, in the
// table's order, with what it means; "ERROR" (an error the table does not
// know) comes last.
func Codes() []CodeDoc {
	var docs []CodeDoc
	index := map[codeExit]int{}
	for _, c := range codes {
		key := codeExit{c.code, c.exit}
		if i, ok := index[key]; ok {
			if codeMeanings[c.code] == "" {
				docs[i].Meaning = joinMeaning(docs[i].Meaning, c.err.Error())
			}
			continue
		}
		index[key] = len(docs)
		m := codeMeanings[c.code]
		if m == "" {
			m = c.err.Error()
		}
		docs = append(docs, CodeDoc{Code: c.code, Exit: c.exit, Meaning: m})
	}
	return append(docs, CodeDoc{Code: "ERROR", Exit: ExitError, Meaning: codeMeanings["ERROR"]})
}

// Classes lists the classes of a failed trigger with their exit statuses
// (Classify's).
func Classes() []CodeDoc {
	classes := []supervise.Class{
		supervise.TargetNotFound, supervise.PaneDead, supervise.SendKeysError,
		supervise.AckTimeout, supervise.OperatorBusy, supervise.DeferTimeout,
		supervise.RegistryDrift, supervise.RateLimited, supervise.ThreadBlocked,
		supervise.FallbackRequired, supervise.AgentStalled,
	}
	docs := make([]CodeDoc, 0, len(classes))
	for _, c := range classes {
		code, exit := Classify(&supervise.FailedError{Class: c})
		docs = append(docs, CodeDoc{Code: code, Exit: exit, Meaning: classMeanings[c]})
	}
	return docs
}

// codeExit is a code with one of its exit statuses.
type codeExit struct {
	code string
	exit int
}

// joinMeaning adds the message b to the meaning a, once.
func joinMeaning(a, b string) string {
	switch {
	case a == "":
		return b
	case strings.Contains(a, b):
		return a
	}
	return a + "; " + b
}
