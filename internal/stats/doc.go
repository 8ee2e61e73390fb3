// Package stats computes the figures of a user's (or the whole server's)
// chains from the state database: chains by state per group, progress,
// the step turnaround distribution, steps finished per hour and the
// estimated time to finish each group. The status page, the metrics and
// the nightly report all show these same figures.
package stats
