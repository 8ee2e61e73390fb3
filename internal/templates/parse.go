package templates

import (
	"bytes"
	"fmt"
)

// Parse builds a Queue from the two templates' contents; wuFile/resultFile
// name them in errors.
func Parse(name string, wu, result []byte, wuFile, resultFile string) (*Queue, error) {
	if !ValidName(name) {
		return nil, fmt.Errorf("queue name %q is not valid: use letters, digits and underscores, at most %d", name, MaxNameLen)
	}
	wd, err := loadDoc(wuFile, wu)
	if err != nil {
		return nil, err
	}
	rd, err := loadDoc(resultFile, result)
	if err != nil {
		return nil, err
	}
	q := &Queue{Name: name, WUFile: wuFile, ResultFile: resultFile}
	if err := q.readWU(wd); err != nil {
		return nil, err
	}
	if err := q.readResult(rd); err != nil {
		return nil, err
	}
	// Own copies: the caller may reuse its buffers.
	q.wuText, q.resultText = bytes.Clone(wu), bytes.Clone(result)
	return q, nil
}

// locErr prefixes an error with the file and the element it concerns.
func locErr(file, elem string, err error) error {
	if elem == "" {
		return fmt.Errorf("%s: %w", file, err)
	}
	return fmt.Errorf("%s: %s: %w", file, elem, err)
}
