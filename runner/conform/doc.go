// Package conform compares a program of the user's own with one of dmx's
// algorithms, input by input (dmx check --conform ALGO TRACE): for a
// program that speaks the message vocabulary of the algorithm (its message
// types, and their fields stamp, id, term and vals: Vocabulary, which dmx
// list ALGO shows), each process's recorded inputs are fed to dmx's
// reference machine of the algorithm, and the first input after which the
// program's outputs differ from the machine's is reported, with the rule
// of the course notes that decides what the machine does there ([RH1],
// [RA2], ...).
//
// What a program must do to conform is what the reference does, at the
// level of what a trace shows: for every input, the same messages to the
// same processes (type and fields; their order within one input free),
// the same critical sections entered and the same leaders decided. It
// must use the Lamport clock dmx hands each input ("clock") where the
// notes use the local clock (a request's T_Pi), and name its messages and
// fields as dmx's machine does. Waits, timers, notes and election starts
// are not compared; timer inputs are given to the reference by the
// program's timer names, so a program that runs on time-outs conforms
// only with the reference's timer names. The reference gets the run's
// parameters that it declares (central's coordinator, ...).
package conform
