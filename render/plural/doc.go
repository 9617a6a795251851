// Package plural writes counts the way English says them: "1 event", "2
// events", "1 process", "3 processes", "1 entry". Every count dmx prints
// (tables' captions, notes of checks, statuses of runs, errors) goes
// through it, so that none reads "1 rows".
//
// It is a leaf package under render, which owns presentation, so that
// analyze, runner and trace, which write notes and statuses of their own,
// can use it without importing render.
package plural
