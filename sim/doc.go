// Package sim is party's simulator: an in-memory multiplexer whose panes
// run simulated agents, and a virtual clock, so that routing and delivery
// (and later waits of minutes) are tested in microseconds, with faults
// injected at will: lost Enters, dead panes, busy agents, dialogs, copy
// mode, slow rendering.
package sim
