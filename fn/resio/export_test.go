package resio

// WriteResultsForTest exposes writeResults to the external tests.
var WriteResultsForTest = writeResults

// ReadFile reads data as the contents of the file at path as ReadPaths
// reads a file; the resources are annotated with path ("-" for stdin: no
// annotation).
func ReadFile(path string, data []byte) *Resources {
	s := &Resources{}
	s.parse(path, data)
	return s
}

// parseItem parses an item's chunk as Run does (parseTree, then keepBooks
// when the fast path keeps its books) and takes its fingerprint.
func (ip *itemParser) parseItem(raw []byte, t itemText, own bool) (*parsedItem, error) {
	p, err := ip.parseTree(raw)
	if err != nil {
		return nil, err
	}
	if own {
		if err := p.keepBooks(raw, t); err != nil {
			return nil, err
		}
	}
	ip.fingerprint(p)
	return p, nil
}

// parseChunk parses an item's chunk and takes its fingerprint.
func (ip *itemParser) parseChunk(raw []byte) (*parsedItem, error) {
	p, err := ip.parseTree(raw)
	if err != nil {
		return nil, err
	}
	ip.fingerprint(p)
	return p, nil
}
