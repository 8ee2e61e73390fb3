package master

import "slices"

// A master's work units are those of its tags: Options.Tag and every other
// tag it has submitted work units of (kept in the state file). The server
// gives a tag's results to one consumer: the chains a master submits are
// marked as a master's, a tag holding chains of rboinc-submit or a GAHP
// batch is refused, and rboinc-retrieve is refused a master's tag. Two
// masters share a tag's results only when they share the tag: give each
// its own.

// owns says whether tag is one of the master's.
func (m *Master) owns(tag string) bool {
	if tag == m.tag {
		return true
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Contains(m.st.Tags, tag)
}

// tags lists the master's tags, its own first.
func (m *Master) tags() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string{m.tag}, m.st.Tags...)
}

// claim records tag as the master's, durably, before work units of it are
// submitted: a master that crashes after the submission still takes their
// results once restarted.
func (m *Master) claim(tag string) error {
	if m.owns(tag) {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.st.Tags = append(m.st.Tags, tag)
	return m.save(true)
}
