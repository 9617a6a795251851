package trace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// Inputs users name (a foreign log, a scenario, a rules file) are read
// whole, at most so many bytes: /dev/zero, or a pipe that never ends, as a
// scenario ran dmx out of memory.
const (
	MaxScenarioBytes = 16 << 20 // a scenario or a rules file
	MaxLogBytes      = 2 << 30  // a foreign log
	// MaxStreamBytes bounds an input that is not a regular file (a pipe,
	// a device), whose size is not known before it is read.
	MaxStreamBytes = 64 << 20
)

// ReadInput reads the file at path, which a user named as input, whole:
// at most limit bytes (MaxStreamBytes if it is not a regular file), or an
// error that says it is bigger. A directory is refused.
func ReadInput(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("%s: a directory, not a file", path)
	}
	var data []byte
	if fi.Mode().IsRegular() {
		if fi.Size() > limit {
			return nil, fmt.Errorf("%s: %d bytes, more than the %d MiB this input may have", path, fi.Size(), limit>>20)
		}
		data = make([]byte, 0, fi.Size()+1)
	} else {
		limit = min(limit, MaxStreamBytes)
	}
	buf := bytes.NewBuffer(data)
	_, err = buf.ReadFrom(io.LimitReader(f, limit+1))
	data = buf.Bytes()
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: more than the %d MiB this input may have (a pipe or a device is read up to %d MiB: save a longer one in a file)", path, limit>>20, MaxStreamBytes>>20)
	}
	return data, nil
}
