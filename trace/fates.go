package trace

// Undelivered returns the fates of a run's messages that were never
// received (in_flight, dropped, lost_to_crash: see the messages table), by
// message id. A renderer draws each such message to its end: a cross for a
// lost one, an open arrow for one still in flight.
func (s *Store) Undelivered(run int64) (map[int64]string, error) {
	rows, err := s.db.Query(`SELECT id, fate FROM messages WHERE run = ? AND recv_event IS NULL`, run)
	if err != nil {
		return nil, s.wrap(err)
	}
	defer rows.Close()
	out := make(map[int64]string)
	for rows.Next() {
		var id int64
		var fate string
		if err := rows.Scan(&id, &fate); err != nil {
			return nil, s.wrap(err)
		}
		out[id] = fate
	}
	return out, s.wrap(rows.Err())
}
