// Package wait knows when an agent has finished the turn party gave it.
// Its sources, most trusted first:
//
//   - the agent's own hook events in the session's event log (Claude
//     Code's UserPromptSubmit/Stop, Codex's notify, Gemini's
//     BeforeAgent/AfterAgent), which the Waiter reads (wait.go);
//   - the agent's transcript, where the hooks say less than the turn
//     did: Claude's session transcript (ClaudeTranscript, claude.go) and
//     Codex's rollout file (CodexRollout, codex.go), which tell an
//     answer from a failed, interrupted or permission-blocked turn;
//   - the screen: Gemini's cancelled-turn notice and its answer read off
//     the screen when its hooks are lost (GeminiScreen, gemini.go);
//   - a nonce marker the agent is asked to print, found on the pane's
//     rows below where the prompt was pasted (Mark, FindTurn, FindMarker,
//     marker.go).
//
// Waiting is driven by wake-ups: a control-mode client that sees pane
// output and the session's wake-up pipe (Watcher, watch.go), with a slow
// poll as a safety net only. A hook that could not record its event (a
// read-only or full state dir) is reported to the waits listening then,
// and noted for those that start later (SessionUnheard): they go on with
// the transcript or the screen. A wait that times out says so with the
// last screen (TimeoutError). ReadLog (log.go) prints the event log for party
// log, following it on request.
package wait
