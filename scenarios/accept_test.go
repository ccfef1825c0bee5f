package scenarios

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/partyhq/party/mockagents/mocklog"
	"github.com/partyhq/party/mockagents/realagent"
)

// The acceptance runs (supervise_accept on the mocks, accept/real_accept
// on the real agents) count each trigger's arrivals from outside party:
// from the log of what the agents (mocks) or the model (fakemodel) took,
// one envelope at a time, and compare them with what party's store says.

// acceptTrigger is what the count needs of a trigger as party trigger
// list --json prints it.
type acceptTrigger struct {
	ID        string    `json:"id"`
	Role      string    `json:"role"`
	Text      string    `json:"text"`
	Status    string    `json:"status"`
	Class     string    `json:"class"`
	Reached   bool      `json:"reached"`
	AckedAt   time.Time `json:"acked_at"`
	AckSource string    `json:"ack_source"`
}

// arrivalModes are the log modes in which a text reached an agent (mock)
// or the model (fakemodel) as something to act on: typed and submitted,
// queued behind a turn, or steered into one. A "side" request (Claude's
// title request repeating the user's text), a "continue" (a tool's
// result), a "dialog" answer and the other modes are not arrivals.
var arrivalModes = map[string]bool{"submit": true, "queued": true, "steer": true}

// envelopeID finds every envelope's id in a text: an agent that merges
// queued texts takes two envelopes in one prompt, and each counts.
var envelopeID = regexp.MustCompile(`\[BRIDGE_TRIGGER id=([^ \]]+)[ \]]`)

// acceptGoal is the share of the triggers that must be acked without a
// person, in percent.
const acceptGoal = 99

// acceptFigures are an acceptance run's figures, counted by countArrivals.
type acceptFigures struct {
	// Triggers counts every trigger in party's store; MustNotDeliver those
	// the run meant never to reach an agent (not counted in the acked
	// share's base).
	Triggers       int `json:"triggers"`
	MustNotDeliver int `json:"must_not_deliver"`
	// From party's store.
	Completed    int            `json:"completed"`
	Failed       int            `json:"failed"`
	FailedClass  map[string]int `json:"failed_by_class"`
	Acked        int            `json:"acked"`
	AckedPercent float64        `json:"acked_percent"`
	AckedGoal    int            `json:"acked_goal_percent"`
	Resumed      int            `json:"resumed"`
	// From the log: each trigger's envelopes that arrived.
	ArrivedOnce  int `json:"arrived_once"`
	ArrivedNever int `json:"arrived_never"`
	// The failures of the run, by trigger id. Lost: over as completed,
	// acked or still open by party's store, yet never arrived. Open: not
	// over. Doubled: arrived more than once. FailedArrived: failed without
	// reaching the agent by the store, yet arrived. Delivered: meant never
	// to reach an agent, yet arrived (or not failed).
	Lost          []string `json:"lost"`
	Open          []string `json:"open"`
	Doubled       []string `json:"doubled"`
	FailedArrived []string `json:"failed_yet_arrived"`
	Delivered     []string `json:"must_not_deliver_yet_delivered"`
	// FailedNotArrived are the failed triggers that never arrived: said
	// failed, with a class, to the person (they count against the acked
	// share, not as lost).
	FailedNotArrived []string `json:"failed_not_arrived"`
	// Foreign are the texts that reached an agent without an envelope
	// (agent: text): in these runs only triggers are sent, so one is
	// something else typed into an agent's box and submitted, such as
	// the operator's draft.
	Foreign []string `json:"texts_not_from_a_trigger"`
	// Arrivals is each trigger's count of arrivals that is not 1.
	Arrivals map[string]int `json:"arrivals_not_once"`
}

// countArrivals counts each trigger's envelopes in the log entries and
// compares them with the store's triggers; mustNot are the ids the run
// meant never to reach an agent.
func countArrivals(triggers []acceptTrigger, log []mocklog.Entry, mustNot []string) acceptFigures {
	arrived := map[string]int{}
	var foreign []string
	for _, e := range log {
		if !arrivalModes[e.Mode] {
			continue
		}
		ms := envelopeID.FindAllStringSubmatch(e.Text, -1)
		for _, m := range ms {
			arrived[m[1]]++
		}
		if len(ms) == 0 && strings.TrimSpace(e.Text) != "" {
			foreign = append(foreign, e.Agent+": "+e.Text)
		}
	}
	f := acceptFigures{FailedClass: map[string]int{}, Arrivals: map[string]int{}, AckedGoal: acceptGoal, Foreign: foreign}
	for _, t := range triggers {
		n := arrived[t.ID]
		delete(arrived, t.ID)
		f.Triggers++
		if n != 1 {
			f.Arrivals[t.ID] = n
		}
		switch t.Status {
		case "completed":
			f.Completed++
		case "failed":
			f.Failed++
			f.FailedClass[t.Class]++
		}
		if !t.AckedAt.IsZero() {
			f.Acked++
		}
		if t.AckSource == "resume" {
			f.Resumed++
		}
		switch {
		case n == 0:
			f.ArrivedNever++
		case n == 1:
			f.ArrivedOnce++
		default:
			f.Doubled = append(f.Doubled, t.ID)
		}
		if slices.Contains(mustNot, t.ID) {
			f.MustNotDeliver++
			if n > 0 || t.Status != "failed" {
				f.Delivered = append(f.Delivered, t.ID)
			}
			continue
		}
		switch over := t.Status == "completed" || t.Status == "failed"; {
		case !over:
			f.Open = append(f.Open, t.ID)
			if n == 0 {
				f.Lost = append(f.Lost, t.ID)
			}
		case t.Status == "failed" && n == 0:
			f.FailedNotArrived = append(f.FailedNotArrived, t.ID)
		case t.Status == "failed" && !t.Reached:
			f.FailedArrived = append(f.FailedArrived, t.ID)
		case n == 0:
			f.Lost = append(f.Lost, t.ID)
		}
	}
	// An envelope of no trigger in the store arrived: it came from
	// nowhere, or the store lost the trigger.
	for id, n := range arrived {
		f.Arrivals[id] = n
		f.Lost = append(f.Lost, id)
	}
	sort.Strings(f.Lost)
	if base := f.Triggers - f.MustNotDeliver; base > 0 {
		f.AckedPercent = float64(int(1000*float64(f.Acked)/float64(base)+0.5)) / 10
	}
	return f
}

// check fails the run: a trigger lost, open or doubled, one that arrived
// though the store says it failed before reaching the agent or though it
// was meant never to, a text that was no trigger's reaching an agent, or
// fewer acked than the goal.
func (f acceptFigures) check() error {
	var errs []error
	for _, c := range []struct {
		what string
		ids  []string
	}{
		{"lost", f.Lost}, {"open", f.Open}, {"doubled", f.Doubled},
		{"failed before reaching the agent, yet arrived", f.FailedArrived},
		{"meant never to reach an agent, yet delivered", f.Delivered},
		{"texts not from a trigger reached an agent", f.Foreign},
	} {
		if len(c.ids) > 0 {
			errs = append(errs, fmt.Errorf("%d %s: %q", len(c.ids), c.what, c.ids))
		}
	}
	if base := f.Triggers - f.MustNotDeliver; base == 0 || f.Acked*100 < base*acceptGoal {
		errs = append(errs, fmt.Errorf("%d of %d acked without a person (%.1f%%), the goal is %d%%", f.Acked, base, f.AckedPercent, acceptGoal))
	}
	return errors.Join(errs...)
}

// acceptResult is what a results file under docs/results/ keeps of a run.
type acceptResult struct {
	Run      string          `json:"run"`
	Date     string          `json:"date"`
	Cores    int             `json:"cores"`
	Agents   map[string]any  `json:"agents"`
	Settings json.RawMessage `json:"settings"`
	Figures  acceptFigures   `json:"figures"`
	Passed   bool            `json:"passed"`
	Failures string          `json:"failures,omitempty"`
}

// cmdAccept counts an acceptance run: accept [-events FILE] NAME
// TRIGGERS.json SETTINGS.json [MUST-NOT-DELIVER-ID...] reads the triggers (party
// trigger list --json) and $PARTY_MOCK_LOG, prints the figures as JSON,
// writes them with the settings (party config show --json), the agents'
// versions, the date and the machine's cores to $ACCEPT_FIGURES when set
// and to $PARTY_ACCEPT_RESULTS/NAME.json when the test process has that
// set (make accept), and fails when check does. A failed run prints,
// for each trigger that did not arrive exactly once, its arrivals in the
// log and its lines in FILE (party supervise events), for the evidence.
func cmdAccept(ts *testscript.TestScript, neg bool, args []string) {
	var events string
	if len(args) > 1 && args[0] == "-events" {
		events, args = args[1], args[2:]
	}
	if neg || len(args) < 3 {
		ts.Fatalf("usage: accept [-events FILE] NAME TRIGGERS.json SETTINGS.json [MUST-NOT-DELIVER-ID...]")
	}
	var triggers []acceptTrigger
	ts.Check(json.Unmarshal([]byte(ts.ReadFile(args[1])), &triggers))
	settings := json.RawMessage(ts.ReadFile(args[2]))
	if !json.Valid(settings) {
		ts.Fatalf("accept: %s is not JSON", args[2])
	}
	log, err := mocklog.Read(ts.Getenv("PARTY_MOCK_LOG"))
	ts.Check(err)
	res := acceptResult{
		Run:      args[0],
		Date:     time.Now().UTC().Format(time.RFC3339),
		Cores:    runtime.NumCPU(),
		Agents:   map[string]any{"mocks": "mockagents of this commit"},
		Settings: settings,
		Figures:  countArrivals(triggers, log, args[3:]),
	}
	if ts.Getenv(realagent.TokenVar) != "" {
		pins := map[string]any{}
		for _, p := range realagent.Pins() {
			pins[p.Kind] = p.Package + "@" + p.Version
		}
		res.Agents = pins
	}
	failed := res.Figures.check()
	res.Passed = failed == nil
	if failed != nil {
		res.Failures = failed.Error()
	}
	out, err := json.MarshalIndent(res, "", "  ")
	ts.Check(err)
	out = append(out, '\n')
	_, _ = ts.Stdout().Write(out)
	if p := ts.Getenv("ACCEPT_FIGURES"); p != "" {
		ts.Check(os.WriteFile(p, out, 0o644))
	}
	if dir := os.Getenv("PARTY_ACCEPT_RESULTS"); dir != "" {
		ts.Check(os.MkdirAll(dir, 0o755))
		ts.Check(os.WriteFile(filepath.Join(dir, args[0]+".json"), out, 0o644))
	}
	if failed != nil {
		var lines []string
		if events != "" {
			// Evidence only: a missing file must not hide the failure.
			b, err := os.ReadFile(ts.MkAbs(events))
			if err != nil {
				ts.Logf("accept: no audit lines: %v", err)
			}
			lines = strings.Split(string(b), "\n")
		}
		ts.Fatalf("accept %s: the run failed:\n%v\n%s", args[0], failed, evidence(res.Figures.Arrivals, log, lines))
	}
}

// evidence lists, for each trigger that did not arrive exactly once, its
// arrivals in log and the audit lines that name it.
func evidence(arrivals map[string]int, log []mocklog.Entry, events []string) string {
	var b strings.Builder
	for _, id := range slices.Sorted(maps.Keys(arrivals)) {
		fmt.Fprintf(&b, "%s arrived %d times:\n", id, arrivals[id])
		for _, e := range log {
			for _, m := range envelopeID.FindAllStringSubmatch(e.Text, -1) {
				if m[1] == id {
					fmt.Fprintf(&b, "  log %s %s %s seq %d %s\n", e.Time.Format(time.RFC3339Nano), e.Agent, e.Pane, e.Seq, e.Mode)
				}
			}
		}
		for _, l := range events {
			if strings.Contains(l, `trigger="`+id+`"`) {
				fmt.Fprintf(&b, "  %s\n", l)
			}
		}
	}
	return b.String()
}
