// Package deliver is the one path that types into an agent's pane: send,
// talk, relay, route, the review coordinator and registered agents all go
// through Send. The protocol (docs/design.md §2.4, "Delivery means
// submitted once, as text, into an idle input box"):
//
//  1. Queue for the pane across processes, first come first served; the
//     caller's deadline covers the wait.
//  2. Refuse a dead pane or one not running its agent; wait for an agent
//     still starting; refuse a dialog, a menu or text already in the input
//     box (someone is typing; --clear removes it first).
//  3. Make the text plain for the agent (agent.Profile.Literal) unless the
//     caller sends a command on purpose (Raw).
//  4. Paste it as one bracketed paste; press Enter only once the idle box
//     visibly holds it and the agent's settle time has passed, never into a
//     dialog or menu (a busy agent gets its queue key: Tab for codex), and
//     not while a turn of the agent ends (its hooks run, or its queued
//     messages wait to be taken: hooksQuiet). For Claude the last look
//     and the key go under the pane's key gate, which its hooks hold while
//     they run (gate, state.HoldGate): no hook starts or ends between
//     them, and the look knows when one last ended. A
//     completion menu over the whole text is given a moment to go, then
//     closed once with the agent's MenuKey (gemini's Esc keeps the text);
//     one that stays is refused and the text taken back.
//  5. Confirm by the agent's submit event, else by the box emptying or the
//     agent turning busy. Once confirmed nothing more is pressed; Enter is
//     pressed again only while the box still holds our text.
//  6. Interrupted between paste and confirmation, it takes back what it
//     pasted when the box holds exactly that. A sender killed there
//     (the supervisor) takes it back when it starts again (Reclaim): the
//     text in the box is its own, never someone's draft.
//
// Its parts: the Request, the Deliverer and Send (deliver.go); the
// outcomes and errors a delivery ends with (outcome.go); Sanitize
// (sanitize.go); the look at the pane before the paste, step 2
// (ready.go); the submission from the paste to its last key, step 4
// (submit.go), with a completion menu over the text (menu.go), and its
// confirmation, step 5 (confirm.go); taking a paste back, alone or off
// the end of someone's draft, step 6 and Reclaim (takeback.go); texts
// too long to paste and the pane locks' directory (spill.go).
package deliver
