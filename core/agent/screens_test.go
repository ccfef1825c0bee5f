package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reading is what a profile must make of a captured real screen. Fields
// left nil are not asserted (the screen does not show it either way).
type reading struct {
	input  *string // the typed text; "" for an empty box (placeholders)
	noBox  bool    // no input line on screen (a dialog or panel hides it)
	busy   *bool
	dialog bool
	menu   bool
}

func text(s string) *string { return &s }
func flag(b bool) *bool     { return &b }

var (
	empty = text("")
	yes   = flag(true)
	no    = flag(false)
)

// screenReadings are the readings of golden/screens/<agent>@<version>/
// <state>.txt, captured from the real agents (go test ./golden -run
// TestRealScreens -update). They hold for every captured version.
var screenReadings = map[Kind]map[string]reading{
	Claude: {
		"idle":              {input: empty, busy: no},
		"input-typed":       {input: text("a draft the operator typed"), busy: no},
		"paste-placeholder": {input: text("[Pasted text #1 +12 lines]"), busy: no},
		"busy-before-token": {input: empty, busy: yes},
		"busy-streaming":    {input: empty, busy: yes},
		"queued":            {input: empty, busy: yes}, // "Press up to edit queued messages" is not text
		"after-interrupt":   {busy: yes},               // the queued message runs at once
		"answered":          {input: empty, busy: no},
		"stop-hooks":        {input: empty, busy: yes},
		"dialog-permission": {noBox: true, dialog: true, busy: no},
		"dialog-trust":      {noBox: true, dialog: true},
		"dialog-api-key":    {noBox: true, dialog: true},
		"error-400":         {input: empty, busy: no},
		"error-retry":       {input: empty, busy: yes},
		"panel-cost":        {noBox: true},
	},
	Codex: {
		"idle":              {input: empty, busy: no},
		"input-typed":       {input: text("a draft the operator typed"), busy: no},
		"paste-placeholder": {input: text("[Pasted Content 1572 chars]"), busy: no},
		"busy-before-token": {input: empty, busy: yes},
		"busy-alt-frame":    {input: empty, busy: yes}, // the ◦ frame of the spinner
		"busy-streaming":    {input: empty},            // codex shows no busy line while text streams
		"queued":            {input: empty, busy: yes},
		"after-interrupt":   {input: text("queued while busy"), busy: no}, // the queued text is put back
		"answered":          {input: empty, busy: no},
		"dialog-permission": {noBox: true, dialog: true, busy: no},
		"dialog-trust":      {noBox: true, dialog: true},
		"error-400":         {input: empty, busy: no},
		"error-retry":       {input: empty, busy: yes}, // "◦ Reconnecting... 2/5"
	},
	Gemini: {
		"idle":              {input: empty, busy: no},
		"input-typed":       {input: text("a draft the operator typed"), busy: no},
		"paste-placeholder": {input: text("[Pasted Text: 13 lines]"), busy: no},
		"busy-before-token": {input: empty, busy: yes},
		"busy-streaming":    {input: empty, busy: yes},
		"queued":            {input: empty, busy: yes},
		"after-interrupt":   {input: empty, busy: no},
		"answered":          {input: empty, busy: no},
		"dialog-permission": {noBox: true, dialog: true, busy: no},
		"dialog-trust":      {noBox: true, dialog: true},
		"dialog-auth":       {noBox: true, dialog: true},
		"dialog-api-key":    {noBox: true, dialog: true}, // a text box: Enter would store our text as the key
		"error-400":         {input: empty, busy: no},
		"error-retry":       {input: empty, busy: yes}, // 5xx keeps the spinner while retrying
		"menu-slash":        {input: text("/he"), menu: true, busy: no},
		"menu-at":           {input: text("read @READ"), menu: true, busy: no},
	},
}

func TestRealScreensRead(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("..", "..", "golden", "screens", "*@*"))
	require.NoError(t, err)
	require.NotEmpty(t, dirs, "no captured real screens under golden/screens")
	for _, dir := range dirs {
		kind := Kind(strings.SplitN(filepath.Base(dir), "@", 2)[0])
		want, ok := screenReadings[kind]
		require.True(t, ok, "captures of an agent without readings: %s", dir)
		for state, r := range want {
			t.Run(filepath.Base(dir)+"/"+state, func(t *testing.T) {
				b, err := os.ReadFile(filepath.Join(dir, state+".txt"))
				require.NoError(t, err)
				screen := strings.TrimRight(string(b), "\n")
				p := Lookup(kind)
				in, found := p.InputLine(screen)
				if r.noBox {
					assert.False(t, found, "got input line %q, want none", in)
				}
				if r.input != nil {
					assert.True(t, found, "no input line found, want %q", *r.input)
					assert.Equal(t, *r.input, in, "input")
				}
				if r.busy != nil {
					assert.Equal(t, *r.busy, p.IsBusy(screen), "busy")
				}
				line, dialog := Dialog(screen)
				assert.Equal(t, r.dialog, dialog, "dialog (line %q)", line)
				assert.Equal(t, r.menu, p.MenuOpen(screen), "completion menu open")
			})
		}
	}
}
