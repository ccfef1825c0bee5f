package agent

import (
	"path/filepath"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Kind names an agent family.
type Kind string

// The agent kinds party knows.
const (
	Claude  Kind = "claude"
	Codex   Kind = "codex"
	Gemini  Kind = "gemini"
	Shell   Kind = "shell"
	Generic Kind = "generic"
)

// Profile describes how one kind of agent behaves on screen. The screen
// shapes it reads are the real agents' (docs/agents-reference.md §2); the mock
// personas draw the same.
type Profile struct {
	Kind Kind
	// Commands are the pane_current_command values that mean the agent is
	// running. Empty means any command is accepted.
	Commands []string
	// Settle is the pause between the paste and the Enter that submits it.
	Settle time.Duration
	// Prompts are the glyphs that start the input line ("❯", "›", ">").
	// Empty means the input line is unknown and submission is confirmed by
	// the screen changing.
	Prompts []string
	// Placeholders are texts an empty input line shows; PlaceholderPattern
	// matches more of them (claude's Try "…").
	Placeholders       []string
	PlaceholderPattern *regexp.Regexp
	// Busy matches a screen line shown while the agent works.
	Busy *regexp.Regexp
	// Gated is an agent whose hooks (party hook) hold the pane's key gate
	// while they run (state.HoldGate): a delivery presses its keys under
	// it. Claude: its Stop hook and the queue it runs next.
	Gated bool
	// QueueKey is the key that queues a message while the agent is busy
	// (Enter for claude, Tab for codex, whose Enter steers the running turn).
	QueueKey string
	// Queue matches a screen line shown while the agent holds queued
	// messages (Codex's "• Queued follow-up inputs"): busy, or about to
	// start the next of them, where an Enter steers that turn. Not busy
	// for all that (IsBusy): a delivery presses its QueueKey, which an
	// idle Codex ignores (Queueing).
	Queue *regexp.Regexp
	// Pasted matches what the input shows in place of a long paste
	// ("[Pasted text #2 +40 lines]").
	Pasted *regexp.Regexp
	// Warmup is how long a freshly started agent must have shown its
	// input box before it takes a paste as a paste: gemini reads text
	// pasted sooner as typed keys ("?" opens its shortcuts, "!" its shell
	// mode).
	Warmup time.Duration
	// Taken matches a screen that shows the agent has taken a prompt
	// before (an answer, its spinner): Warmup is over.
	Taken *regexp.Regexp
	// Confirm is how long an Enter is watched before it is pressed again
	// (zero: the deliverer's default): gemini can take a second to move
	// a text from its box into its queue.
	Confirm time.Duration
	// ClearKeys empty one line of the input box, pressed in turn until
	// it is empty (default C-u).
	ClearKeys []string
	// MenuKey closes a completion menu open over the input and leaves the
	// text in the box (gemini: Escape); empty when there is none.
	MenuKey string
	// Permissions are how the agent's approval dialogs ask: a dialog
	// under a line that starts with one of them asks a permission
	// (PermissionAsked).
	Permissions []string
}

var shells = []string{"bash", "zsh", "sh", "dash", "fish", "ksh", "tcsh", "csh", "nu", "elvish"}

var profiles = map[Kind]Profile{
	Claude: {
		Kind:     Claude,
		Commands: []string{"claude", "node"},
		Settle:   150 * time.Millisecond,
		Prompts:  []string{"❯"},
		// Dim placeholders: while a message is queued, and in a fresh
		// session.
		Placeholders:       []string{"Press up to edit queued messages"},
		PlaceholderPattern: regexp.MustCompile(`^Try ".*"$`),
		// "✢ Skedaddling…", "✻ Thinking… (16s · ↓ 8 tokens)",
		// "· Whirring… (running stop hooks… 0/2 · 4s)", and the retry line
		// "✻ API error · Retrying in 13s · attempt 7/10". Not "✻ Sautéed
		// for 6s", which ends a turn. The footer's "esc to interrupt" is
		// read apart (IsBusy).
		Busy:     regexp.MustCompile(`^ ?[·✢✳✶✻✽*] (?:[^…\s][^…]{0,60}…|API error · Retrying in )`),
		Gated:    true,
		QueueKey: "Enter",
		// A queued message: "  ❯ text" above the input box (a numbered
		// "❯ 1. Yes" is a dialog's item).
		Queue:       regexp.MustCompile(`^  ❯ (?:[^\d\s]|\d+(?:[^.\d]|$))`),
		Pasted:      regexp.MustCompile(`\[Pasted text #\d+(?: \+\d+ lines)?\]`),
		Permissions: []string{"Do you want to proceed?", "Do you want to make this edit", "Do you want to create"},
	},
	Codex: {
		Kind:         Codex,
		Commands:     []string{"codex", "node"},
		Settle:       150 * time.Millisecond,
		Prompts:      []string{"›"},
		Placeholders: []string{"Ask Codex to do anything", "Implement {feature}", "Find and fix a bug in @filename", "Explain this codebase", "Summarize recent commits", "Improve documentation in @filename", "Write tests for @filename"},
		// "• Working (1s • esc to interrupt)" alternating with "◦ Working
		// (…)"; the header may be a reasoning title instead of Working.
		Busy:     regexp.MustCompile(`^\s*[•◦] \S.*\([^()]*\b(?i:esc) to interrupt\)\s*$`),
		QueueKey: "Tab",
		Queue:    regexp.MustCompile(`^\s*• Queued follow-up inputs\s*$`),
		Pasted:   regexp.MustCompile(`\[Pasted Content \d+ chars\]`),
		// A refused /word is left with the cursor at its start, where
		// C-u deletes nothing.
		ClearKeys:   []string{"C-e", "C-u"},
		Permissions: []string{"Would you like to run the following command?", "Would you like to make the following edits?"},
	},
	Gemini: {
		Kind:     Gemini,
		Commands: []string{"gemini", "node"},
		// An Enter within ~40 ms of the paste being processed is a newline:
		// at 100 ms a third of the sends needed a second Enter, 200 ms none.
		Settle:       200 * time.Millisecond,
		Prompts:      []string{">"},
		Placeholders: []string{"Type your message or @path/to/file"},
		// " ⠸ Thinking... (esc to cancel, 1s)", "(esc to cancel, 1m 4s)".
		Busy:     regexp.MustCompile(`\(esc to cancel, (?:\d+h )?(?:\d+m )?\d+s\)|^\s*[\x{2801}-\x{28FF}] \S.*(?:\.\.\.|…)`),
		QueueKey: "Enter",
		// "  Queued (press ↑ to edit):" above the spinner, the texts under
		// it; as a turn ends gemini submits them joined. A prompt submitted
		// in that moment can be dropped: real_gemini_concurrent once lost
		// one of ten sends that said submitted (inferred from gemini's
		// submitQuery returning early while a query starts, gemini-cli
		// issue 3161; not reproduced).
		Queue:  regexp.MustCompile(`^  Queued \(press ↑ to edit\):\s*$`),
		Pasted: regexp.MustCompile(`\[Pasted Text: \d+ lines?\]`),
		// Measured: 0.5 s after the placeholder showed, pastes were still
		// read as keys; 1 s and 2 s were safe.
		Warmup:  1500 * time.Millisecond,
		Taken:   regexp.MustCompile(`(?m)^\s*✦ |\(esc to cancel, |Queued \(press ↑ to edit\)`),
		Confirm: time.Second,
		// C-u never joins lines in gemini; BSpace does.
		ClearKeys: []string{"C-u", "BSpace"},
		// Esc with its menu open closes the menu and keeps the text; a
		// second Esc within 500 ms would empty the box.
		MenuKey:     "Escape",
		Permissions: []string{"Allow execution of"},
	},
	Shell: {
		Kind:     Shell,
		Commands: shells,
		Settle:   20 * time.Millisecond,
		QueueKey: "Enter",
	},
	Generic: {
		Kind:     Generic,
		Settle:   100 * time.Millisecond,
		QueueKey: "Enter",
	},
}

// Lookup returns the profile of kind, falling back to Generic.
func Lookup(kind Kind) Profile {
	if p, ok := profiles[kind]; ok {
		return p
	}
	return profiles[Generic]
}

// ForPane is the profile of a pane's agent: kind (its @party_agent), else
// what its role's name says (the legacy two-pane layout).
func ForPane(kind Kind, role string) Profile {
	if kind == "" {
		kind = Infer([]string{role})
	}
	return Lookup(kind)
}

// Infer returns the agent kind of a launch command: its program's base name
// decides (claude, codex, gemini, a known shell), anything else is generic.
// An empty command is the user's shell.
func Infer(argv []string) Kind {
	if len(argv) == 0 {
		return Shell
	}
	prog := filepath.Base(argv[0])
	switch Kind(prog) {
	case Claude, Codex, Gemini:
		return Kind(prog)
	}
	for _, s := range shells {
		if prog == s {
			return Shell
		}
	}
	return Generic
}

// TakesAgentText says whether text that an agent wrote (a block the
// switchboard forwards, a relayed plan or result, the review loop's
// notices) may be typed into a pane whose agent is kind without the
// user's say-so: only into claude, codex and gemini, whose input box hands
// it to the model as a message. A shell would run it as a command line,
// and another program (generic: python3, a REPL, a TUI party does not
// know) may do the same; why names which: "shell" or "program".
func TakesAgentText(kind Kind) (ok bool, why string) {
	switch kind {
	case Claude, Codex, Gemini:
		return true, ""
	case Shell:
		return false, "shell"
	}
	return false, "program"
}

// Runs reports whether the pane's current command is this agent. A profile
// without Commands accepts any command.
func (p Profile) Runs(currentCommand string) bool {
	if len(p.Commands) == 0 {
		return true
	}
	for _, c := range p.Commands {
		if c == currentCommand {
			return true
		}
	}
	return false
}

// InputLine finds the agent's input line on screen and returns what is
// typed in it (the lines of a multi-line input joined with "\n"), with
// placeholders reported as empty. found is false when the profile has no
// prompt glyph or no input line is on screen: claude's is the ❯ line of the
// last box between two rules (a history echo "❯ text" is not), gemini's
// the > line under the last rule, codex's the last › line; a dialog or
// panel drawn in place of the input box means there is none.
func (p Profile) InputLine(screen string) (text string, found bool) {
	if len(p.Prompts) == 0 {
		return "", false
	}
	lines := strings.Split(screen, "\n")
	switch p.Kind {
	case Claude:
		return p.claudeInput(lines)
	case Gemini:
		i, j, ok := geminiInput(lines)
		if !ok {
			return "", false
		}
		return p.typed(geminiText(lines[i:j])), true
	}
	for i := len(lines) - 1; i >= 0; i-- {
		if caretItem.MatchString(lines[i]) {
			return "", false // a dialog drawn in place of the input
		}
		rest, ok := p.afterPrompt(lines[i])
		if !ok {
			continue
		}
		return p.typed(rest), true
	}
	return "", false
}

// typed is text with placeholders reported as empty.
func (p Profile) typed(text string) string {
	for _, ph := range p.Placeholders {
		if text == ph {
			return ""
		}
	}
	if p.PlaceholderPattern != nil && p.PlaceholderPattern.MatchString(text) {
		return ""
	}
	return text
}

// claudeInput reads claude's input box: a rule, "❯" + U+00A0 and the text
// (continuation lines indented by two), a rule, the footer. Only the last
// two rules on screen can hold it.
func (p Profile) claudeInput(lines []string) (string, bool) {
	bottom := lastRule(lines, len(lines))
	if bottom < 0 {
		return "", false
	}
	top := lastRule(lines, bottom)
	if top < 0 || top+1 >= bottom {
		return "", false
	}
	box := lines[top+1 : bottom]
	first := strings.TrimRight(box[0], " ")
	rest, ok := strings.CutPrefix(first, "❯")
	if !ok || (rest != "" && !strings.HasPrefix(rest, "\u00a0")) {
		return "", false
	}
	out := []string{strings.TrimPrefix(rest, "\u00a0")}
	for _, l := range box[1:] {
		out = append(out, strings.TrimPrefix(l, "  "))
	}
	return p.typed(trimLines(out)), true
}

// lastRule is the index of the last rule line above end, or -1.
func lastRule(lines []string, end int) int {
	for i := end - 1; i >= 0; i-- {
		if isRule(lines[i]) {
			return i
		}
	}
	return -1
}

// isRule reports whether l is a horizontal rule (─ only).
func isRule(l string) bool {
	t := strings.TrimSpace(l)
	return utf8.RuneCountInString(t) >= 4 && strings.Trim(t, "─") == ""
}

// geminiInput finds gemini's input: the " > " line a few lines under the
// last rule (a hint and a blank line come between), and its continuation
// lines (indented by three). The input is lines[i:j]. A history echo
// " > text" has no rule above it; a boxed dialog hides the rule and the
// input.
func geminiInput(lines []string) (i, j int, ok bool) {
	r := lastRule(lines, len(lines))
	if r < 0 {
		return 0, 0, false
	}
	for i = r + 1; i < len(lines) && i <= r+4; i++ {
		if geminiPrompt.MatchString(lines[i]) {
			j = i + 1
			for j < len(lines) && strings.HasPrefix(lines[j], "   ") && strings.TrimSpace(lines[j]) != "" {
				j++
			}
			return i, j, true
		}
	}
	return 0, 0, false
}

var geminiPrompt = regexp.MustCompile(`^ ?>(?: |$)`)

// geminiText is the text of gemini's input lines.
func geminiText(lines []string) string {
	out := make([]string, len(lines))
	for k, l := range lines {
		if k == 0 {
			l = geminiPrompt.ReplaceAllString(l, "")
		}
		out[k] = strings.TrimLeft(l, " ")
	}
	return trimLines(out)
}

// trimLines joins lines with their trailing blanks and the blank lines at
// the end removed.
func trimLines(lines []string) string {
	for k := range lines {
		lines[k] = strings.TrimRight(lines[k], " \u00a0\t")
	}
	return strings.Trim(strings.Join(lines, "\n"), " \u00a0\t\n")
}

func (p Profile) afterPrompt(line string) (string, bool) {
	l := strings.TrimLeft(line, " \u00a0")
	for _, g := range p.Prompts {
		if !strings.HasPrefix(l, g) {
			continue
		}
		rest := l[len(g):]
		if rest != "" && !strings.HasPrefix(rest, " ") && !strings.HasPrefix(rest, "\u00a0") {
			continue
		}
		return strings.Trim(rest, " \u00a0\t"), true
	}
	return "", false
}

// IsBusy reports whether the screen shows the agent working. Claude is
// also busy when its footer (under the input box) says "esc to interrupt".
func (p Profile) IsBusy(screen string) bool {
	if p.Busy == nil {
		return false
	}
	lines := strings.Split(screen, "\n")
	for _, l := range lines {
		if p.Busy.MatchString(l) {
			return true
		}
	}
	if p.Kind == Claude {
		if r := lastRule(lines, len(lines)); r >= 0 {
			for _, l := range lines[r+1:] {
				if strings.Contains(l, "esc to interrupt") {
					return true
				}
			}
		}
	}
	return false
}

// Queueing reports whether the screen shows the agent holding queued
// messages (Profile.Queue).
func (p Profile) Queueing(screen string) bool {
	if p.Queue == nil {
		return false
	}
	for _, l := range strings.Split(screen, "\n") {
		if p.Queue.MatchString(l) {
			return true
		}
	}
	return false
}

// TurnStarting reports whether Codex's transcript ends with a prompt it
// has not answered, above its input box: as a turn ends Codex takes the
// next queued message, echoes it and drops its queue's list, a moment
// before its turn starts and the busy line shows (its rollout records
// nothing yet either). An Enter then would steer that turn; the queue
// key queues. Only an answer, a notice or an error (a line that starts
// in the first column) says the prompt above it was answered.
func (p Profile) TurnStarting(screen string) bool {
	if p.Kind != Codex {
		return false
	}
	lines := strings.Split(screen, "\n")
	box := -1
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], "› ") {
			box = i
			break
		}
	}
	for i := box - 1; i >= 0; i-- {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "› "):
			return true
		case l != "" && !strings.HasPrefix(l, " "):
			return false
		}
	}
	return false
}

// MenuOpen reports whether a completion menu is open over the input, so
// that Enter would pick one of its items instead of submitting: gemini's
// / and @ menus, which open for an input starting with / or whose last
// word holds @ and list their items under the input.
func (p Profile) MenuOpen(screen string) bool {
	if p.Kind != Gemini {
		return false
	}
	lines := strings.Split(screen, "\n")
	i, j, ok := geminiInput(lines)
	if !ok {
		return false
	}
	// The placeholder's "@path/to/file" is no typed word.
	text := p.typed(geminiText(lines[i:j]))
	words := strings.Fields(text)
	if !strings.HasPrefix(text, "/") && (len(words) == 0 || !strings.Contains(words[len(words)-1], "@") || strings.HasSuffix(text, " ")) {
		return false
	}
	// Items are listed between the input and the footer.
	for _, l := range lines[j:] {
		t := strings.TrimSpace(l)
		if isRule(l) || strings.Contains(l, "sandbox") || strings.Contains(l, "/model") {
			break
		}
		if t != "" {
			return true
		}
	}
	return false
}

var (
	// caretItem is a highlighted item of a numbered menu: "❯ 1. Yes",
	// "› 1. Yes, proceed (y)", or in a gemini box "│ ● 1. Allow once".
	caretItem = regexp.MustCompile(`^\s*(?:[❯›>▶→]|│\s*●)\s*\d{1,2}\.\s+\S`)
	plainItem = regexp.MustCompile(`^\s*(?:│\s*)?\d{1,2}\.\s+\S`)
	// textBox is a boxed dialog that takes typed text: gemini's API-key box.
	textBox = regexp.MustCompile(`^\s*│\s*(Enter Gemini API Key)\b`)
)

// dialogWindow is how many non-blank lines at the bottom of the screen are
// searched for a menu; older numbered lists in history are not dialogs.
const dialogWindow = 16

// Dialog reports whether a numbered menu or dialog is on screen, returning
// its highlighted line. A menu is a caret-marked numbered item (or a boxed
// "● 1." item) with at least one other numbered item near it, within the
// bottom of the screen; gemini's API-key text box is a dialog too.
func Dialog(screen string) (string, bool) {
	var tail []string
	lines := strings.Split(screen, "\n")
	for i := len(lines) - 1; i >= 0 && len(tail) < dialogWindow; i-- {
		if strings.TrimSpace(lines[i]) != "" {
			tail = append([]string{lines[i]}, tail...)
		}
	}
	for i, l := range tail {
		if m := textBox.FindStringSubmatch(l); m != nil {
			return m[1], true
		}
		if !caretItem.MatchString(l) {
			continue
		}
		for j := max(0, i-4); j < min(len(tail), i+5); j++ {
			if j != i && plainItem.MatchString(tail[j]) {
				return strings.Trim(strings.TrimSpace(l), "│ "), true
			}
		}
	}
	return "", false
}

// Holds reports whether the input shown, in (as InputLine returns it),
// can be the text pasted: its paste placeholder, or a visible part of the
// text (the agents rewrap it, turn tabs into spaces, trim it and show "…"
// or a scroll arrow for what scrolled out of a tall input, so those do not
// count).
func (p Profile) Holds(in, text string) bool {
	if in == "" {
		return false
	}
	if p.Pasted != nil {
		// A placeholder stands for the text, or a piece of it; what is
		// shown beside it must be the text's too (not a draft typed
		// before the paste).
		in = p.Pasted.ReplaceAllString(in, "…")
	}
	// Codex draws "↑" on its prompt line when a tall input scrolled.
	for _, part := range strings.FieldsFunc(in, func(r rune) bool { return r == '…' || r == '↑' || r == '↓' }) {
		if !ContainsText(text, part) {
			return false
		}
	}
	return true
}

// HoldsAll reports whether the input shown is the whole text pasted (or
// its placeholder), nothing else.
func (p Profile) HoldsAll(in, text string) bool {
	if p.Pasted != nil && p.Pasted.MatchString(in) && strings.TrimSpace(p.Pasted.ReplaceAllString(in, "")) == "" {
		return true
	}
	return in != "" && Squeeze(in) == Squeeze(text)
}

// ContainsText reports whether s holds sub once white space is dropped
// from both: how an agent's echo of a text (rewrapped, tabs made spaces,
// trimmed, several queued texts merged into one) is matched to it.
func ContainsText(s, sub string) bool {
	return strings.Contains(Squeeze(s), Squeeze(sub))
}

// Squeeze drops every white space character: how a text and the way an
// agent shows it (rewrapped, tabs made spaces, trimmed) are compared.
func Squeeze(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}
