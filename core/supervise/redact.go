package supervise

import (
	"fmt"
	"regexp"
)

// secretShapes are what the supervisor blanks out of the text it keeps
// for diagnostics (errors with the last screen of a pane): API keys and
// tokens of the common providers, bearer tokens, private keys.
var secretShapes = regexp.MustCompile(`sk-(?:ant-)?[A-Za-z0-9_-]{16,}` +
	`|AKIA[0-9A-Z]{16}` +
	`|gh[pousr]_[A-Za-z0-9]{20,}` +
	`|github_pat_[A-Za-z0-9_]{20,}` +
	`|xox[abprs]-[A-Za-z0-9-]{10,}` +
	`|AIza[0-9A-Za-z_-]{35}` +
	`|(?i:bearer)\s+[A-Za-z0-9._~+/=-]{16,}` +
	`|-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)`)

// MaxDiagnostic is how much of a diagnostic text is kept, in bytes.
const MaxDiagnostic = 4 << 10

// Redactor blanks secrets out of diagnostic texts and bounds their length.
type Redactor struct {
	// Extra is a further pattern of the user's (supervise.redact), or nil.
	Extra *regexp.Regexp
}

// NewRedactor is a Redactor with the user's pattern extra ("" for none).
func NewRedactor(extra string) (Redactor, error) {
	if extra == "" {
		return Redactor{}, nil
	}
	re, err := regexp.Compile(extra)
	if err != nil {
		return Redactor{}, fmt.Errorf("supervise.redact: %v: %w", err, ErrBadInput)
	}
	return Redactor{Extra: re}, nil
}

// Clean is s with every secret shape replaced by [REDACTED], cut to
// MaxDiagnostic bytes (its start kept, the cut said).
func (r Redactor) Clean(s string) string {
	s = secretShapes.ReplaceAllString(s, "[REDACTED]")
	if r.Extra != nil {
		s = r.Extra.ReplaceAllString(s, "[REDACTED]")
	}
	if len(s) > MaxDiagnostic {
		cut := MaxDiagnostic
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut-- // not inside a UTF-8 character
		}
		s = fmt.Sprintf("%s… (%d bytes cut)", s[:cut], len(s)-cut)
	}
	return s
}
