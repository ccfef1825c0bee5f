package dash

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/partyhq/party/core/termsafe"
)

// UI is the dashboard's own state: what is selected, filtered, typed.
type UI struct {
	Width, Height int
	// Selected is the index of the selected agent among the visible ones.
	Selected int
	// Filter keeps the agents whose row holds it (any case); Filtering
	// says it is being typed.
	Filter    string
	Filtering bool
	// Talking says a message to the selected agent is being typed
	// (Draft).
	Talking bool
	Draft   string
	Help    bool
	// Status is the outcome of the last action (a jump, a talk).
	Status string
}

// Ref names one agent of the model: Host is "" for this host's.
type Ref struct {
	Host, Session, Pane, Role string
}

// Visible are the agents that pass filter, in the order they are shown.
func Visible(m Model, filter string) []Ref {
	var out []Ref
	f := strings.ToLower(filter)
	for _, s := range m.shown() {
		for _, a := range s.Agents {
			if f == "" || strings.Contains(strings.ToLower(s.Host+" "+s.Name+" "+a.Role+" "+a.Kind+" "+a.State.String()+" "+detail(a)), f) {
				out = append(out, Ref{Host: s.Host, Session: s.Name, Pane: a.Pane, Role: a.Role})
			}
		}
	}
	return out
}

var (
	titleStyle  = lipgloss.NewStyle().Bold(true)
	headStyle   = lipgloss.NewStyle().Faint(true)
	selStyle    = lipgloss.NewStyle().Reverse(true)
	statusStyle = lipgloss.NewStyle().Faint(true)
	stateStyles = map[State]lipgloss.Style{
		Starting:   lipgloss.NewStyle().Faint(true),
		Idle:       lipgloss.NewStyle().Foreground(lipgloss.Color("2")),
		Busy:       lipgloss.NewStyle().Foreground(lipgloss.Color("4")).Bold(true),
		Permission: lipgloss.NewStyle().Foreground(lipgloss.Color("3")).Bold(true),
		Dialog:     lipgloss.NewStyle().Foreground(lipgloss.Color("3")),
		Failed:     lipgloss.NewStyle().Foreground(lipgloss.Color("1")).Bold(true),
		Dead:       lipgloss.NewStyle().Foreground(lipgloss.Color("1")).Faint(true),
	}
)

// Render draws m with ui as the lines of a terminal ui.Width wide and at
// most ui.Height high (zero: no limit). Text the agents wrote is made
// terminal-safe.
func Render(m Model, ui UI) string {
	width := ui.Width
	if width <= 0 {
		width = 100
	}
	if ui.Help {
		return fit(helpLines(), width, ui.Height)
	}
	refs := Visible(m, ui.Filter)
	shown := m.shown()
	var body []string
	total, busy, human := 0, 0, 0
	for _, s := range shown {
		for _, a := range s.Agents {
			total++
			if a.State == Busy {
				busy++
			}
			if a.State.NeedsHuman() {
				human++
			}
		}
	}
	head := fmt.Sprintf("party dash · %d session%s · %d agent%s · %d busy · %d need%s you",
		len(shown), plural(len(shown)), total, plural(total), busy, human, map[bool]string{true: "s"}[human == 1])
	if len(m.Hosts) > 0 {
		off := 0
		for _, h := range m.Hosts {
			if h.Error != nil {
				off++
			}
		}
		head += fmt.Sprintf(" · %d host%s, %d offline", len(m.Hosts), plural(len(m.Hosts)), off)
	}
	clock := m.Now.Format("15:04:05")
	body = append(body, titleStyle.Render(pad(head, width-len(clock)-1))+" "+clock)
	if len(m.Sessions) == 0 {
		body = append(body, "", "no party sessions on this server")
	}
	// A HOST column once other hosts are configured: "local" for this
	// host's agents.
	hostW := 0
	if len(m.Hosts) > 0 {
		hostW = len("local")
		for _, h := range m.Hosts {
			hostW = max(hostW, ansi.StringWidth(safe(h.Name)))
		}
		hostW = min(hostW, 16)
	}
	roleW, kindW := 4, 4
	for _, s := range shown {
		for _, a := range s.Agents {
			roleW = max(roleW, ansi.StringWidth(safe(a.Role)))
			kindW = max(kindW, ansi.StringWidth(safe(a.Kind)))
		}
	}
	roleW = min(roleW, 16)
	const stateW = 18
	var selected *Agent
	selLine := 0 // the selected agent's line in body
	idx := 0
	hostCol := func(host string) string {
		if hostW == 0 {
			return ""
		}
		return pad(safe(cmp.Or(host, "local")), hostW) + "  "
	}
	for si, s := range shown {
		if si == len(m.Sessions) {
			body = append(body, hostLines(m.Hosts, m.Now, width)...)
		}
		title := safe(s.Name)
		if s.Host != "" {
			title += " @" + safe(s.Host)
		}
		body = append(body, "", titleStyle.Render(title))
		// A column of tokens once an agent of the session has spent some.
		spent := slices.ContainsFunc(s.Agents, func(a Agent) bool { return a.Tokens > 0 })
		tokensHead := ""
		if spent {
			tokensHead = pad("TOKENS", tokensW) + "  "
		}
		hostHead := ""
		if hostW > 0 {
			hostHead = pad("HOST", hostW) + "  "
		}
		body = append(body, headStyle.Render("  "+hostHead+pad("ROLE", roleW)+"  "+pad("KIND", kindW)+"  "+pad("STATE", stateW)+"  Q  "+tokensHead+"DOING"))
		for ai := range s.Agents {
			a := &s.Agents[ai]
			if idx >= len(refs) || refs[idx].Host != s.Host || refs[idx].Session != s.Name || refs[idx].Pane != a.Pane {
				continue
			}
			queued := "-"
			if a.Queued > 0 {
				queued = strconv.Itoa(a.Queued)
			}
			st := stateStyles[a.State].Render(pad(stateText(*a, m.Now), stateW))
			left := "  " + hostCol(s.Host) + pad(safe(a.Role), roleW) + "  " + pad(safe(a.Kind), kindW) + "  "
			rest := "  " + pad(queued, 1) + "  "
			if spent {
				rest += pad(tokens(a.Tokens), tokensW) + "  "
			}
			used := ansi.StringWidth(left) + stateW + ansi.StringWidth(rest)
			line := left + st + rest + ansi.Truncate(safe(detail(*a)), max(width-used, 0), "…")
			if idx == ui.Selected {
				selected, selLine = a, len(body)
				line = selStyle.Render("▸" + ansi.Strip(line)[1:])
			}
			body = append(body, line)
			idx++
		}
		body = append(body, sessionLines(*s.Session, m.Now, width)...)
	}
	if len(shown) == len(m.Sessions) {
		body = append(body, hostLines(m.Hosts, m.Now, width)...)
	}
	foot := []string{""}
	if selected != nil {
		foot = append(foot, detailLines(*selected, width)...)
	}
	switch {
	case ui.Talking && selected != nil:
		foot = append(foot, "talk to "+safe(selected.Role)+": "+safe(ui.Draft)+"█", statusStyle.Render("enter send · esc cancel"))
	case ui.Filtering:
		foot = append(foot, "/"+safe(ui.Filter)+"█", statusStyle.Render("enter keep · esc clear"))
	default:
		keys := "↑/↓ select · enter jump · t talk · / filter · ? help · q quit"
		if ui.Filter != "" {
			keys = "filter /" + safe(ui.Filter) + " · " + keys
		}
		if ui.Status != "" {
			foot = append(foot, safe(ui.Status))
		}
		foot = append(foot, statusStyle.Render(keys))
	}
	if room := ui.Height - len(foot); ui.Height > 0 && len(body) > room {
		// Scrolled so that the selected agent shows, under the title.
		room = max(room, 1)
		if first := selLine - room + 1; first > 1 {
			body = append(body[:1], body[first+1:]...)
		}
		body = body[:room]
	}
	return fit(append(body, foot...), width, ui.Height)
}

// hostLines are the other hosts' lines: each host, whether it answers
// (up, looking, or offline with why) and when it was last seen.
func hostLines(hosts []Host, now time.Time, width int) []string {
	if len(hosts) == 0 {
		return nil
	}
	out := []string{"", titleStyle.Render("hosts")}
	nameW, sshW := 4, 3
	for _, h := range hosts {
		nameW, sshW = max(nameW, ansi.StringWidth(safe(h.Name))), max(sshW, ansi.StringWidth(safe(h.SSH)))
	}
	nameW, sshW = min(nameW, 16), min(sshW, 32)
	for _, h := range hosts {
		state := fmt.Sprintf("up · %d session%s · looked in %s", len(h.Sessions), plural(len(h.Sessions)), (time.Duration(h.Elapsed) * time.Millisecond).Round(time.Millisecond))
		switch {
		case h.Looking():
			state = "looking…"
		case h.Error != nil:
			state = "offline · " + h.Error.Code
			if !h.Seen.IsZero() && !now.IsZero() {
				state += " · last seen " + Duration(now.Sub(h.Seen)) + " ago"
			}
			state += " · " + h.Error.Message
		}
		out = append(out, ansi.Truncate("  "+pad(safe(h.Name), nameW)+"  "+pad(safe(h.SSH), sshW)+"  "+safe(state), width, "…"))
	}
	return out
}

// stateText is the state column: the state and for how long.
func stateText(a Agent, now time.Time) string {
	s := a.State.String()
	// An idle agent without events was only seen idle: since when is
	// not known.
	if a.State != Starting && (a.State != Idle || a.Hooked) && !a.Since.IsZero() && !now.IsZero() {
		s += " " + Duration(now.Sub(a.Since))
	}
	return s
}

// detail is the last column: what the agent does, asks or answered.
func detail(a Agent) string {
	switch a.State {
	case Busy:
		if a.Prompt != "" {
			return "▶ " + a.Prompt
		}
	case Permission, Dialog, Failed, Dead:
		return "! " + a.Reason
	}
	if a.Answer != "" {
		return "◀ " + a.Answer
	}
	return ""
}

// detailLines are the selected agent's lines under the table.
func detailLines(a Agent, width int) []string {
	out := []string{titleStyle.Render(safe(a.Role)) + " " + headStyle.Render("("+safe(a.Kind)+", "+a.Pane+")")}
	add := func(label, text string) {
		if text != "" {
			out = append(out, ansi.Truncate("  "+label+" "+safe(text), width, "…"))
		}
	}
	if a.State == Busy {
		add("prompt:", a.Prompt)
	}
	if a.State.NeedsHuman() || a.State == Dead {
		add(a.State.String()+":", a.Reason)
	}
	add("last answer:", a.Answer)
	add("worktree branch:", a.Branch)
	if a.Tokens > 0 {
		add("tokens spent:", strconv.FormatInt(a.Tokens, 10))
	}
	return out
}

// sessionLines are the supervisor's, the review's and the tasks' lines of
// a session.
func sessionLines(s Session, now time.Time, width int) []string {
	var out []string
	line := func(s string) { out = append(out, ansi.Truncate(s, width, "…")) }
	if sv := s.Supervisor; sv != nil {
		run := "not running"
		if sv.Running {
			run = "running"
		}
		open, failed := 0, 0
		for _, t := range sv.Triggers {
			if t.Status == "failed" {
				failed++
			} else {
				open++
			}
		}
		line(fmt.Sprintf("  supervisor: %s · %d runtime%s · %d open trigger%s · %d failed", run, len(sv.Runtimes), plural(len(sv.Runtimes)), open, plural(open), failed))
		for _, r := range sv.Runtimes {
			switch r.Status {
			case "stalled":
				line("    " + safe(r.Role) + "  stalled " + Duration(now.Sub(r.StalledSince)) + "  busy, no sign of life")
			case "over_budget":
				line("    " + safe(r.Role) + "  over budget: its triggers are held")
			}
		}
		for _, t := range sv.Triggers {
			why := t.Class
			if t.Error != "" {
				why += " " + t.Error
			}
			line("    " + safe(t.ID) + " → " + safe(t.Role) + "  " + t.Status + " " + Duration(now.Sub(t.Since)) + "  " + safe(strings.TrimSpace(why)))
		}
	}
	if r := s.Review; r != nil {
		st := r.State
		if r.Phase != "" {
			st += " (" + r.Phase + ")"
		}
		var ev []string
		for _, e := range r.Evidence {
			mark := "✗"
			switch {
			case e.Fresh:
				mark = "✓"
			case e.Present:
				mark = "~"
			}
			ev = append(ev, e.Kind+mark)
		}
		proc := ""
		if !r.Running {
			proc = " · coordinator not running"
		}
		line(fmt.Sprintf("  review: %s %s · iteration %d/%d · %d review%s%s", st, Duration(now.Sub(r.Since)), r.Iteration, r.MaxIterations, r.Reviews, plural(r.Reviews), proc))
		line("    evidence: " + strings.Join(ev, " "))
		if r.Note != "" {
			line("    note: " + safe(r.Note))
		}
	}
	if t := s.Tasks; t != nil {
		line(fmt.Sprintf("  tasks: %d pending · %d in progress · %d done", t.Count("pending"), t.Count("in_progress"), t.Count("done")))
		for _, it := range t.Items {
			if it.Status == "done" {
				continue
			}
			who := ""
			if it.Assignee != "" {
				who = " @" + it.Assignee
			}
			line("    " + pad(it.Status, 11) + " " + safe(it.ID) + " " + safe(it.Title) + safe(who))
		}
	}
	return out
}

func helpLines() []string {
	return []string{
		titleStyle.Render("party dash — keys"),
		"",
		"  ↑ ↓ k j     select an agent",
		"  enter       jump to the agent's pane (tmux switch-client, select-pane)",
		"  t           talk to the agent (party talk's delivery: queued behind other talks)",
		"  /           filter the agents (role, kind, state, text); esc clears",
		"  ?           this help; any key closes it",
		"  q ctrl+c    quit",
		"",
		"States: starting, idle, busy (for how long), permission (asks to run a tool),",
		"dialog (another dialog is open), failed (the turn's error), dead (the pane exited).",
		"Q counts the sends and talks waiting for the agent's pane.",
	}
}

// fit cuts lines to width and height.
func fit(lines []string, width, height int) string {
	if height > 0 && len(lines) > height {
		lines = lines[:height]
	}
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, width, "")
	}
	return strings.Join(lines, "\n")
}

// pad is s padded with spaces, or cut, to width cells.
func pad(s string, width int) string {
	w := ansi.StringWidth(s)
	if w > width {
		return ansi.Truncate(s, width, "…")
	}
	return s + strings.Repeat(" ", width-w)
}

func safe(s string) string { return termsafe.Text(s) }

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Duration is d as the dashboard shows it: 45s, 3m 4s, 2h 5m.
func Duration(d time.Duration) string {
	d = max(d, 0).Round(time.Second)
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d.Seconds())) + "s"
	case d < time.Hour:
		return fmt.Sprintf("%dm %ds", int(d.Minutes()), int(d.Seconds())%60)
	default:
		return fmt.Sprintf("%dh %dm", int(d.Hours()), int(d.Minutes())%60)
	}
}

// Plain is m drawn once without styles or keys, 120 columns wide, as
// party dash --once prints it.
func Plain(m Model) string {
	lines := strings.Split(ansi.Strip(Render(m, UI{Width: 120, Selected: -1})), "\n")
	// The key line is for the live view.
	return strings.TrimRight(strings.Join(lines[:len(lines)-1], "\n"), "\n")
}

// tokensW is the width of the TOKENS column.
const tokensW = 6

// tokens is n short: 950, 12.3k, 4.5M; "-" for none.
func tokens(n int64) string {
	switch {
	case n <= 0:
		return "-"
	case n < 1000:
		return strconv.FormatInt(n, 10)
	case n < 1_000_000:
		return strconv.FormatFloat(float64(n)/1e3, 'f', 1, 64) + "k"
	}
	return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) + "M"
}
