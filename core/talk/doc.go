// Package talk is party talk's turn protocol: deliver a message to one or
// more agent panes and, when asked, wait for the turn it started to end.
// One request waits per agent at a time (a FIFO request lock whose queue
// time counts against the timeout); completion is known from the agent's
// hooks and transcripts, else from a nonce marker it is asked to print.
package talk
