package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// potential is the particles' potential energy in the harmonic well
// (k = 1): half the sum of their squared distances from its centre, read
// from a coordinates file (x y z a line).
func potential(path string) (float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("reading the coordinates of a result: %w", err)
	}
	defer f.Close()
	var e float64
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if len(fields) < 3 {
			return 0, fmt.Errorf("%s line %d: want x y z", path, line)
		}
		for _, s := range fields[:3] {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return 0, fmt.Errorf("%s line %d: %w", path, line, err)
			}
			e += v * v / 2
		}
	}
	return e, sc.Err()
}
