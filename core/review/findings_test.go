package review

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseFindings(t *testing.T) {
	tests := []struct {
		name, doc, problem string
	}{
		{"valid", `{"findings":[{"id":"F1","file":"a.go","line":2,"severity":"blocking","category":"tests","description":"no test","suggestion":"add one"}],"summary":"s","stats":{"files_reviewed":1,"blocking":1,"non_blocking":0}}`, ""},
		{"none", `{"findings":[],"summary":"clean","stats":{}}`, ""},
		{"verdict", `{"verdict":"APPROVE","findings":[],"summary":"s"}`, "findings carry a verdict"},
		{"unknown field", `{"findings":[],"summary":"s","score":3}`, `unknown field "score"`},
		{"missing findings", `{"summary":"s"}`, `"findings" is missing`},
		{"empty summary", `{"findings":[]}`, `"summary" is empty`},
		{"missing stats", `{"findings":[],"summary":"s"}`, `"stats" is missing`},
		{"empty category", `{"findings":[{"id":"F1","severity":"blocking","description":"d"}],"summary":"s","stats":{}}`, `findings[0]: "category" is empty`},
		{"bad severity", `{"findings":[{"id":"F1","severity":"major","description":"d"}],"summary":"s"}`, `"severity" must be blocking or non-blocking, got "major"`},
		{"duplicate id", `{"findings":[{"id":"F1","severity":"blocking","description":"d"},{"id":"F1","severity":"blocking","description":"d"}],"summary":"s"}`, "id F1 is used twice"},
		{"not JSON", `findings: none`, "not JSON of the findings schema (invalid character"},
		{"two documents", `{"findings":[],"summary":"s"} {}`, "more than one JSON value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseFindings([]byte(tt.doc))
			if tt.problem == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrFindings)
			assert.Contains(t, err.Error(), tt.problem)
		})
	}
}

func TestBlockingCount(t *testing.T) {
	f, err := ParseFindings([]byte(`{"findings":[{"id":"a","severity":"blocking","category":"tests","description":"d"},{"id":"b","severity":"non-blocking","category":"docs","description":"d"}],"summary":"s","stats":{}}`))
	require.NoError(t, err)
	assert.Equal(t, 1, f.Blocking())
}

func TestPartialFindingsAreWaitedFor(t *testing.T) {
	for _, doc := range []string{"", "  \n", `{"findings":[{"id":"F1"`, "this is not json"} {
		_, err := ParseFindings([]byte(doc))
		assert.True(t, partial(err), "%q: %v", doc, err)
	}
	_, err := ParseFindings([]byte(`{"verdict":"APPROVE","findings":[],"summary":"s"}`))
	assert.False(t, partial(err), "a complete document with a verdict is not waited for")
}
