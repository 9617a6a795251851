// Package render turns traces and results into things people read: tables
// (through tablewriter) and, in the same spirit, CSV and JSON for scripts.
package render
