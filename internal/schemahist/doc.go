// Package schemahist holds the rules that place a source's schema history
// against the stream, shared by the refresh planner (internal/foldplan),
// the moment planner (internal/moment) and the activities: which schema
// versions fall inside a window of the stream or apply at a cut, what a
// DDL statement is called in a message, and how two shapes of a table
// differ. One rule in one place, so a refresh and a time-travel rebuild
// cannot disagree about the same DDL.
//
// Schema versions carry the seq of the last event before them (a DDL right
// after a transaction carries that transaction's last seq), so at a
// window's ends the binlog position decides (docs/positions.md).
package schemahist
