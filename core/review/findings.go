package review

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Finding is one remark of the reviewer.
type Finding struct {
	ID          string `json:"id"`
	File        string `json:"file"`
	Line        int    `json:"line"`
	Severity    string `json:"severity"` // blocking | non-blocking
	Category    string `json:"category"`
	Description string `json:"description"`
	Suggestion  string `json:"suggestion"`
}

// Findings is what the reviewer writes. It has no verdict: verdicts are the
// implementer's.
type Findings struct {
	Findings []Finding      `json:"findings"`
	Summary  string         `json:"summary"`
	Stats    *FindingsStats `json:"stats"`
}

// FindingsStats are the reviewer's counts.
type FindingsStats struct {
	FilesReviewed int `json:"files_reviewed"`
	Blocking      int `json:"blocking"`
	NonBlocking   int `json:"non_blocking"`
}

// ErrFindings is a findings file that does not follow the schema.
var ErrFindings = errors.New("invalid findings")

// FindingsSchema is the schema told to the reviewer.
const FindingsSchema = `{"findings":[{"id":"F1","file":"path/to/file.go","line":12,"severity":"blocking|non-blocking","category":"correctness|security|performance|style|tests|docs","description":"what is wrong","suggestion":"how to fix it"}],"summary":"one paragraph","stats":{"files_reviewed":1,"blocking":1,"non_blocking":0}}`

// ParseFindings reads and checks a findings document.
func ParseFindings(b []byte) (Findings, error) {
	var f Findings
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		if strings.Contains(err.Error(), `unknown field "verdict"`) {
			return f, fmt.Errorf("findings carry a verdict; the implementer decides verdicts, the reviewer only reports findings: %w", ErrFindings)
		}
		return f, fmt.Errorf("not JSON of the findings schema (%w): %w", err, ErrFindings)
	}
	if dec.More() {
		return f, fmt.Errorf("more than one JSON value: %w", ErrFindings)
	}
	var probs []string
	if f.Findings == nil {
		probs = append(probs, `"findings" is missing (use [] for none)`)
	}
	if f.Stats == nil {
		probs = append(probs, `"stats" is missing`)
	}
	if strings.TrimSpace(f.Summary) == "" {
		probs = append(probs, `"summary" is empty`)
	}
	seen := map[string]bool{}
	for i, x := range f.Findings {
		at := fmt.Sprintf("findings[%d]", i)
		switch {
		case x.ID == "":
			probs = append(probs, at+`: "id" is empty`)
		case seen[x.ID]:
			probs = append(probs, at+`: id `+x.ID+` is used twice`)
		}
		seen[x.ID] = true
		if x.Severity != "blocking" && x.Severity != "non-blocking" {
			probs = append(probs, fmt.Sprintf(`%s: "severity" must be blocking or non-blocking, got %q`, at, x.Severity))
		}
		if strings.TrimSpace(x.Category) == "" {
			probs = append(probs, at+`: "category" is empty`)
		}
		if strings.TrimSpace(x.Description) == "" {
			probs = append(probs, at+`: "description" is empty`)
		}
		if x.Line < 0 {
			probs = append(probs, at+`: "line" is negative`)
		}
	}
	if len(probs) > 0 {
		return f, fmt.Errorf("%s: %w", strings.Join(probs, "; "), ErrFindings)
	}
	return f, nil
}

// Blocking counts the blocking findings.
func (f Findings) Blocking() int {
	n := 0
	for _, x := range f.Findings {
		if x.Severity == "blocking" {
			n++
		}
	}
	return n
}

// Message is the text the implementer reads for review r: the findings (f
// when r's outcome is Valid) or what went wrong, and the choices it has.
func Message(r Review, f Findings, findingsPath string, iteration, maxIterations int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Review %d", r.N)
	if r.Title != "" {
		fmt.Fprintf(&b, ": %s", r.Title)
	}
	b.WriteString("\n\n")
	switch r.Outcome {
	case Valid:
		fmt.Fprintf(&b, "The reviewer wrote %d finding(s), %d blocking (file: %s).\n\n", r.Total, r.Blocking, findingsPath)
		fmt.Fprintf(&b, "Summary: %s\n\n", f.Summary)
		for _, x := range f.Findings {
			loc := x.File
			if x.Line > 0 {
				loc = fmt.Sprintf("%s:%d", x.File, x.Line)
			}
			fmt.Fprintf(&b, "- %s [%s, %s] %s: %s\n", x.ID, x.Severity, x.Category, loc, x.Description)
			if x.Suggestion != "" {
				fmt.Fprintf(&b, "  Suggestion: %s\n", x.Suggestion)
			}
		}
	case Invalid:
		fmt.Fprintf(&b, "The reviewer's findings file %s is not valid: %s\nNothing of it was taken. Ask for the review again (party review re-review) or discuss.\n", findingsPath, r.Problem)
	case Late:
		fmt.Fprintf(&b, "The reviewer wrote no findings in time (%s). If they arrive later they will be delivered.\n", r.Problem)
	}
	fmt.Fprintf(&b, "\nThis was review %d of at most %d before a discussion with the user.\n", iteration, maxIterations)
	b.WriteString(`The verdict is yours:
- party review approve                 no blocking finding is left (only after valid findings)
- party review re-review "REASON"      you fix the findings and ask for another review
- party review needs-discussion "WHY"  the user has to decide
`)
	return b.String()
}
