package trace

// SchemaVersion is the version of the trace schema this package writes and
// reads, stored in the file as PRAGMA user_version. Open refuses a trace whose
// version is newer.
const SchemaVersion = 1

// Schema is the SQL that creates an empty trace (schema version 1). It is
// public: users query traces with `dmx sql` and sqlite3, and the README
// quotes this text. Every table and column is described here.
//
// Indexes are not part of the contract: a trace of version 1 may lack the
// newer ones (the time indexes, LamportIndex and WallIndex, came later
// without a version change, since a reader of version 1 reads the file
// the same with or without them), and readers work either way.
//
// runs: one row per recorded run. A trace file may hold several runs, appended
// by one or several dmx processes (each run has its own id).
//
//	id            run id, referenced by every other table's run column
//	algorithm     algorithm name as `dmx list` shows it ("ricart-agrawala");
//	              for an imported log, the format it came in ("shiviz")
//	nodes         number of processes N; procs are numbered 0..N-1
//	seed          the run's seed as decimal TEXT, exactly as dmx prints it
//	              ("seed: 42"): TEXT because seeds are uint64 and SQLite
//	              integers are signed. `WHERE seed = 42` works (the literal
//	              takes the column's TEXT affinity); quote seeds of 2^63 and
//	              more, which SQLite would read as REAL numbers. '' for an
//	              imported log, which has no seed.
//	mode          "udp" (dmx run), "sim" (dmx sim) or "import"
//	params        JSON object: algorithm and workload parameters, the
//	              driver's delay and port, and the run's duration when it
//	              is not the default: what the rerun line needs
//	faults        JSON array: the fault specifications of the run
//	tool_version  version of the dmx that recorded the run
//	started_ns    wall-clock start, ns since the Unix epoch
//	ended_ns      wall-clock end; NULL while the run is being recorded
//	complete      1 if the run ended normally and the trace holds all of it,
//	              0 while recording and for interrupted runs
//	status        how the run ended, in words ("ok", "interrupted", ...);
//	              "running" until it ends. Its recorder holds a lock on the
//	              file meanwhile: Store.Runs reports a run still "running"
//	              whose recorder is gone (killed) as abandoned
//	              (StatusAbandoned)
//
// procs: optional process names (imported traces name their processes).
//
//	run, proc     the run and the process number
//	name          the process's name in the source of the trace
//
// events: one row per event, the trace proper.
//
//	id            insertion order within the file (SQLite rowid). Not a
//	              causal order: order by (proc, seq) for program order and
//	              use lamport or vc for causality.
//	run           the run the event belongs to
//	proc          the process (0..nodes-1) where the event happened
//	seq           1-based position in proc's program order, without gaps
//	kind          send, receive, drop, internal, cs_request, cs_enter,
//	              cs_exit, election_start, leader, crash, recover, timeout,
//	              deliver, wait, start, stop, fault (importers may add
//	              kinds). A drop is recorded by the sender of a message an
//	              injected fault discarded (detail: the fault, and
//	              "resend":true when the transport sends it again); a fault
//	              event by each process an injected fault begins or ends
//	              acting at (detail {"fault": "partition:0+1@1s-2s",
//	              "phase": "start"} or "end"), or by the lowest live process
//	              for a fault that could not be applied ("phase": "not
//	              applied", "reason": why); a network fault of a real
//	              run also says what made it: "by" "kernel" (nftables
//	              rules, netem: dmx run --net netns) or "transport" (dmx's
//	              transport judged each datagram), and "how" in words. A
//	              start event of a real run gives the node's address
//	              ("addr") and, under --net netns, its namespace ("netns")
//	lamport       Lamport clock stamped on the event; 0 if not recorded
//	vc            vector clock as a JSON array of N integers ("[1,0,2]"),
//	              entry p counting p's events known at this event; NULL if
//	              not recorded
//	wall_ns       wall-clock time in ns since the Unix epoch (simulated
//	              runs: simulated ns since the start of the simulation)
//	msg           message id of send, receive and drop events (see
//	              messages.id); NULL otherwise
//	msg_type      message type ("request", "ok", "token", ...) of send,
//	              receive and drop events; NULL otherwise
//	peer          the other process: receiver of a send, sender of a
//	              receive, the decided leader, a wait target; NULL if none
//	resource      critical-section resource (cs_*, wait, and the messages of
//	              the algorithm instance guarding it); NULL if none
//	detail        JSON value with kind-specific facts, e.g. {"leader": 3}
//	              for leader and {"timer": "election"} for timeout; NULL if
//	              none. An imported event's detail also says where it came
//	              from: "src" ("chord.log:12", the file and line of its
//	              text), "text" (its text in the log), "fields" (the other
//	              named groups of the log's regex, an object of strings);
//	              and "recv_msgs" and "sent_msgs" list the messages it
//	              receives and sends besides the one in msg (an event of a
//	              foreign log may merge several clocks at once, or one send
//	              may reach several processes), as [message id, peer] pairs
//
// messages: one row per message, maintained as the events are recorded.
//
//	run, id       the run and the message id (the msg column of its events,
//	              or an entry of their detail's recv_msgs and sent_msgs)
//	type          message type
//	sender        process that sent it
//	receiver      process it was addressed to
//	send_event    events.id of its send; NULL if no send was recorded
//	recv_event    events.id of its (first) receive; NULL if never delivered
//	fate          in_flight: sent, not (yet) delivered when the run ended;
//	              delivered: received once; duplicated: received more than
//	              once; dropped: discarded by fault injection (a drop event)
//	              and never received (a message dropped and then sent again
//	              and received is delivered); lost_to_crash: never received, and
//	              its receiver, or its sender, crashed after it was sent
//	              (a killed sender may not have got it onto the network),
//	              or its receiver was down when it was sent (set when the
//	              run ends)
//
// cs_intervals (view): one row per critical-section request. Between two
// crashes of a process (a crash abandons the request it was waiting on and
// the section it held; after recovery the entry is made again), the k-th
// cs_request of a (run, proc, resource) is paired with the k-th cs_enter and
// k-th cs_exit; a request or section abandoned by a crash has NULL enter or
// exit.
//
//	run, proc, resource
//	entry                                    1 for the first request of the
//	                                         process on the resource, 2...
//	request_event, enter_event, exit_event   events.id; NULL when missing
//	request_ns, enter_ns, exit_ns            wall_ns of those events
//	wait_ns                                  enter_ns - request_ns
//	hold_ns                                  exit_ns - enter_ns
//	request_lamport, enter_lamport, exit_lamport
//
// elections (view): one row per election_start and leader event.
//
//	run, proc     where it happened
//	event         events.id
//	kind          'start' (election_start) or 'decide' (leader)
//	leader        for 'decide': the leader the process decided on
//	              (detail.leader, else peer); NULL for 'start'
//	term          detail.election or detail.term when the algorithm numbers
//	              its elections; NULL otherwise
//	resource      the algorithm instance, NULL if none
//	lamport, wall_ns
const Schema = `
CREATE TABLE runs (
  id           INTEGER PRIMARY KEY,
  algorithm    TEXT    NOT NULL,
  nodes        INTEGER NOT NULL,
  seed         TEXT    NOT NULL,
  mode         TEXT    NOT NULL,
  params       TEXT    NOT NULL DEFAULT '{}',
  faults       TEXT    NOT NULL DEFAULT '[]',
  tool_version TEXT    NOT NULL DEFAULT '',
  started_ns   INTEGER NOT NULL,
  ended_ns     INTEGER,
  complete     INTEGER NOT NULL DEFAULT 0 CHECK (complete IN (0, 1)),
  status       TEXT    NOT NULL DEFAULT 'running'
);

CREATE TABLE procs (
  run  INTEGER NOT NULL REFERENCES runs(id),
  proc INTEGER NOT NULL,
  name TEXT    NOT NULL,
  PRIMARY KEY (run, proc)
) WITHOUT ROWID;

CREATE TABLE events (
  id       INTEGER PRIMARY KEY,
  run      INTEGER NOT NULL REFERENCES runs(id),
  proc     INTEGER NOT NULL,
  seq      INTEGER NOT NULL,
  kind     TEXT    NOT NULL,
  lamport  INTEGER NOT NULL,
  vc       TEXT,
  wall_ns  INTEGER NOT NULL,
  msg      INTEGER,
  msg_type TEXT,
  peer     INTEGER,
  resource TEXT,
  detail   TEXT,
  UNIQUE (run, proc, seq)
);

-- Partial indexes, which cost nothing when other kinds are inserted: crash
-- events for the lost_to_crash fate; critical-section events in the order
-- cs_intervals numbers them, covering its columns (3x faster on 1M events);
-- election events for the elections view.
CREATE INDEX events_crash ON events(run, proc, wall_ns) WHERE kind = 'crash';
CREATE INDEX events_cs ON events(run, proc, resource, kind, seq, lamport, wall_ns)
  WHERE kind = 'cs_request' OR kind = 'cs_enter' OR kind = 'cs_exit';
CREATE INDEX events_elections ON events(run, kind)
  WHERE kind = 'election_start' OR kind = 'leader';
-- Time indexes: the events in a window of Lamport or wall time, read
-- without scanning the run (dmx serve asks for such windows as its user
-- pans), and with proc in the index, how many events each process has in
-- a stretch of time without reading the events. Time comes first so that
-- no query constrained on run alone (run = ?, the other indexes' lead)
-- is drawn to them: readers name them with INDEXED BY. Traces made before
-- they were added (same schema version) lack them and are read all the
-- same, by scanning.
CREATE INDEX events_lamport ON events(lamport, run, proc);
CREATE INDEX events_wall ON events(wall_ns, run, proc);

CREATE TABLE messages (
  run        INTEGER NOT NULL REFERENCES runs(id),
  id         INTEGER NOT NULL,
  type       TEXT,
  sender     INTEGER,
  receiver   INTEGER,
  send_event INTEGER REFERENCES events(id),
  recv_event INTEGER REFERENCES events(id),
  fate       TEXT    NOT NULL CHECK (fate IN
               ('in_flight', 'delivered', 'duplicated', 'dropped', 'lost_to_crash')),
  PRIMARY KEY (run, id)
) WITHOUT ROWID;

CREATE VIEW cs_intervals AS
WITH ev AS (
  SELECT id, run, proc, seq, resource, kind, lamport, wall_ns
  FROM events
  WHERE kind = 'cs_request' OR kind = 'cs_enter' OR kind = 'cs_exit'
  UNION ALL
  SELECT id, run, proc, seq, NULL, kind, lamport, wall_ns
  FROM events
  WHERE kind = 'crash'
), lives AS (
  SELECT *, sum(kind = 'crash') OVER (PARTITION BY run, proc ORDER BY seq
                                      ROWS UNBOUNDED PRECEDING) AS life
  FROM ev
), cs AS (
  SELECT id, run, proc, resource, kind, lamport, wall_ns, life,
         ROW_NUMBER() OVER (PARTITION BY run, proc, resource, kind, life ORDER BY seq) AS k,
         ROW_NUMBER() OVER (PARTITION BY run, proc, resource, kind ORDER BY seq) AS n
  FROM lives
  WHERE kind <> 'crash'
), paired AS (
  SELECT run, proc, resource,
         max(CASE kind WHEN 'cs_request' THEN n END) AS entry,
         max(CASE kind WHEN 'cs_request' THEN id END) AS request_event,
         max(CASE kind WHEN 'cs_enter' THEN id END) AS enter_event,
         max(CASE kind WHEN 'cs_exit' THEN id END) AS exit_event,
         max(CASE kind WHEN 'cs_request' THEN wall_ns END) AS request_ns,
         max(CASE kind WHEN 'cs_enter' THEN wall_ns END) AS enter_ns,
         max(CASE kind WHEN 'cs_exit' THEN wall_ns END) AS exit_ns,
         max(CASE kind WHEN 'cs_request' THEN lamport END) AS request_lamport,
         max(CASE kind WHEN 'cs_enter' THEN lamport END) AS enter_lamport,
         max(CASE kind WHEN 'cs_exit' THEN lamport END) AS exit_lamport
  FROM cs
  GROUP BY run, proc, resource, life, k
)
SELECT run, proc, resource, entry, request_event, enter_event, exit_event,
       request_ns, enter_ns, exit_ns,
       enter_ns - request_ns AS wait_ns, exit_ns - enter_ns AS hold_ns,
       request_lamport, enter_lamport, exit_lamport
FROM paired
WHERE request_event IS NOT NULL;

CREATE VIEW elections AS
SELECT run, proc, id AS event,
       CASE kind WHEN 'election_start' THEN 'start' ELSE 'decide' END AS kind,
       CASE WHEN kind = 'leader' THEN
         coalesce(CASE WHEN json_valid(detail) THEN json_extract(detail, '$.leader') END, peer)
       END AS leader,
       CASE WHEN json_valid(detail) THEN
         coalesce(json_extract(detail, '$.election'), json_extract(detail, '$.term'))
       END AS term,
       resource, lamport, wall_ns
FROM events
WHERE kind = 'election_start' OR kind = 'leader';

PRAGMA user_version = 1;
`

// requiredTables are the tables a file must have to be read as a trace.
var requiredTables = []string{"runs", "procs", "events", "messages"}
