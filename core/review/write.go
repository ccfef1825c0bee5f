package review

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/partyhq/party/core/state"
)

// WriteFindings checks b against the findings schema (ParseFindings) and
// writes it atomically as the findings of the last review the coordinator
// dispatched, returning the file's path: what `party review findings`
// does for a reviewer, so that one allowed command (party review …)
// covers its whole part, without a shell redirection into party's state
// dir, which the agents' permission rules cannot allow by prefix. It
// refuses when no review was dispatched (ErrNoReview) and when the
// review has its findings already (ErrIllegal): they are delivered once.
func WriteFindings(dir string, b []byte) (string, error) {
	if _, err := ParseFindings(b); err != nil {
		return "", err
	}
	s, err := Load(dir)
	if err != nil {
		return "", err
	}
	if s.Review == nil {
		return "", fmt.Errorf("findings: no review was requested: %w", ErrNoReview)
	}
	path := FindingsPath(dir, s.Review.N)
	if exists(path) {
		return "", fmt.Errorf("findings: review %d has its findings already (%s): %w", s.Review.N, path, ErrIllegal)
	}
	return path, writeOnce(path, b)
}

// WriteAnswer writes text atomically as the answer to question n (an
// exchange the coordinator still waits on), returning the file's path:
// `party review answer N TEXT`, for the same reason as WriteFindings.
func WriteAnswer(dir string, n int, text string) (string, error) {
	if strings.TrimSpace(text) == "" {
		return "", fmt.Errorf("answer: empty text: %w", ErrBadEvent)
	}
	s, err := Load(dir)
	if err != nil {
		return "", err
	}
	open := false
	for _, x := range s.Exchanges {
		open = open || x.N == n
	}
	if !open {
		return "", fmt.Errorf("answer: no question %d is waiting for an answer: %w", n, ErrIllegal)
	}
	path := AnswerPath(dir, n)
	if exists(path) {
		return "", fmt.Errorf("answer: question %d has its answer already (%s): %w", n, path, ErrIllegal)
	}
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return path, writeOnce(path, []byte(text))
}

// writeOnce writes b to path atomically (a temporary file renamed into
// place), making its directory.
func writeOnce(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return state.WriteFile(path, b, 0o600)
}
