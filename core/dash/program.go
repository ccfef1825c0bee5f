package dash

import (
	"context"
	"io"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
)

// Actions are what the dashboard's keys do to the agents.
type Actions struct {
	// Jump shows the agent's pane on the terminal the dashboard runs in.
	Jump func(ctx context.Context, r Ref) error
	// Talk delivers text to the agent through party's delivery path and
	// says how it went.
	Talk func(ctx context.Context, r Ref, text string) (string, error)
}

// Options are the inputs of Run.
type Options struct {
	// Model is the first model shown; Events the changes that follow,
	// until the channel is closed.
	Model  Model
	Events <-chan Event
	Act    Actions
	Now    func() time.Time
	In     io.Reader
	Out    io.Writer
	// Width and Height fix the size (tests); zero: the terminal's.
	Width, Height int
}

// fps is how often the renderer may draw a frame.
const fps = 10

// Run runs the dashboard on the terminal until q, ctrl+c or ctx ends.
func Run(ctx context.Context, opts Options) error {
	p := &program{ctx: ctx, m: opts.Model, events: opts.Events, act: opts.Act, now: opts.Now}
	p.ui.Width, p.ui.Height = opts.Width, opts.Height
	// The renderer looks for a changed frame fps times a second, even
	// when nothing changed: 10 keeps keys snappy and an idle dashboard
	// cheap (60, the default, is most of its idle CPU).
	popts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithInput(opts.In), tea.WithOutput(opts.Out), tea.WithFPS(fps)}
	if opts.Width > 0 {
		popts = append(popts, tea.WithWindowSize(opts.Width, opts.Height))
	}
	_, err := tea.NewProgram(p, popts...).Run()
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// program is the Bubble Tea model: the dashboard's Model and UI.
type program struct {
	ctx    context.Context
	m      Model
	ui     UI
	events <-chan Event
	act    Actions
	now    func() time.Time
}

type (
	eventMsg struct {
		ev   Event
		open bool
	}
	tickMsg   struct{}
	statusMsg string
)

func (p *program) Init() tea.Cmd {
	return tea.Batch(p.next(), p.tick())
}

// next waits for the source's next event. The event is applied by
// Update, with every other one already waiting, so that a burst of events
// is one render.
func (p *program) next() tea.Cmd {
	if p.events == nil {
		return nil
	}
	return func() tea.Msg {
		select {
		case ev, ok := <-p.events:
			return eventMsg{ev: ev, open: ok}
		case <-p.ctx.Done():
			return nil
		}
	}
}

// tick re-renders the durations: every second while an agent is busy or
// waits for a person, else every 15 s.
func (p *program) tick() tea.Cmd {
	every := 15 * time.Second
	if p.m.AnyBusy() {
		every = time.Second
	}
	return tea.Tick(every, func(time.Time) tea.Msg { return tickMsg{} })
}

func (p *program) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case eventMsg:
		if !msg.open {
			p.events = nil
			return p, nil
		}
		p.apply(msg.ev)
		return p, p.next()
	case tickMsg:
		p.m = Update(p.m, Tick{Now: p.now()})
		return p, p.tick()
	case statusMsg:
		p.ui.Status = string(msg)
	case tea.WindowSizeMsg:
		p.ui.Width, p.ui.Height = msg.Width, msg.Height
	case tea.KeyPressMsg:
		return p, p.key(msg)
	}
	return p, nil
}

// apply applies ev, then the events waiting, at the time now.
func (p *program) apply(ev Event) {
	evs := []Event{ev}
	for more := true; more && p.events != nil; {
		select {
		case ev, ok := <-p.events:
			if !ok {
				more = false
				break
			}
			evs = append(evs, ev)
		default:
			more = false
		}
	}
	p.m = Apply(p.m, p.now(), evs...)
	p.ui.Selected = min(p.ui.Selected, max(len(Visible(p.m, p.ui.Filter))-1, 0))
}

// Apply is Update with each of evs in turn, then the time now.
func Apply(m Model, now time.Time, evs ...Event) Model {
	for _, ev := range evs {
		m = Update(m, ev)
	}
	return Update(m, Tick{Now: now})
}

// key handles one key press.
func (p *program) key(k tea.KeyPressMsg) tea.Cmd {
	key := k.String()
	refs := Visible(p.m, p.ui.Filter)
	switch {
	case p.ui.Help:
		p.ui.Help = false
	case p.ui.Filtering:
		switch key {
		case "enter":
			p.ui.Filtering = false
		case "esc":
			p.ui.Filtering, p.ui.Filter = false, ""
		case "backspace":
			p.ui.Filter = dropLast(p.ui.Filter)
		default:
			p.ui.Filter += k.Text
		}
		p.ui.Selected = 0
	case p.ui.Talking:
		switch key {
		case "enter":
			text := p.ui.Draft
			p.ui.Talking, p.ui.Draft = false, ""
			if p.ui.Selected < len(refs) && text != "" && p.act.Talk != nil {
				r := refs[p.ui.Selected]
				p.ui.Status = "talking to " + r.Role + "…"
				return func() tea.Msg {
					out, err := p.act.Talk(p.ctx, r, text)
					if err != nil {
						return statusMsg("talk to " + r.Role + ": " + err.Error())
					}
					return statusMsg("talk to " + r.Role + ": " + out)
				}
			}
		case "esc":
			p.ui.Talking, p.ui.Draft = false, ""
		case "backspace":
			p.ui.Draft = dropLast(p.ui.Draft)
		default:
			p.ui.Draft += k.Text
		}
	default:
		switch key {
		case "q", "ctrl+c":
			return tea.Quit
		case "up", "k":
			p.ui.Selected = max(p.ui.Selected-1, 0)
		case "down", "j":
			p.ui.Selected = min(p.ui.Selected+1, max(len(refs)-1, 0))
		case "enter":
			if p.ui.Selected < len(refs) && p.act.Jump != nil {
				r := refs[p.ui.Selected]
				return func() tea.Msg {
					if err := p.act.Jump(p.ctx, r); err != nil {
						return statusMsg("jump to " + r.Role + ": " + err.Error())
					}
					return statusMsg("jumped to " + r.Role + " (" + r.Pane + ")")
				}
			}
		case "t":
			if p.ui.Selected < len(refs) {
				p.ui.Talking, p.ui.Status = true, ""
			}
		case "/":
			p.ui.Filtering = true
		case "?":
			p.ui.Help = true
		case "esc":
			p.ui.Filter, p.ui.Status = "", ""
		}
	}
	return nil
}

func dropLast(s string) string {
	r := []rune(s)
	if len(r) == 0 {
		return s
	}
	return string(r[:len(r)-1])
}

func (p *program) View() tea.View {
	v := tea.NewView(Render(p.m, p.ui))
	v.AltScreen = true
	v.WindowTitle = "party dash"
	return v
}

// RunFed is Run with opts.Events fed by f.Watch for as long as the
// dashboard runs: the feed's watchers end before it returns.
func RunFed(ctx context.Context, f Feed, opts Options) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events := make(chan Event, 64)
	var wg sync.WaitGroup
	wg.Go(func() { f.Watch(ctx, events) }) // ends with ctx
	defer wg.Wait()
	defer cancel()
	opts.Events = events
	return Run(ctx, opts)
}
