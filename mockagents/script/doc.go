// Package script is the answer-script language of party's mock agents
// (mockagents) and of the fake model server (mockagents/fakemodel): rules
// that match a prompt (on /regexp/, on "substring", on *) and the steps that
// answer it (think, say, echo, flood, marker, write, run, tool, permission, fail,
// crash, hang, freeze, and usage, which sets the token usage of the model
// response it is in: Usage, ResponseUsage, Tokens). Parse and Load read a
// script, reporting errors as FILE:LINE:COL (Error); Script.Plan picks the steps for a prompt, with a
// default answer when no rule matches; Expand fills in a rule's $0..$9
// groups; MarkerNonce finds the completion marker a prompt asks for.
//
// The language itself is described in the documentation of mockagents.
package script
