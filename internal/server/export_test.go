package server

// DivideBodyLimits makes every route of s take 1/div of its body limit, so
// that a test can send bodies past each limit without sending 64 MiB.
func DivideBodyLimits(s *Server, div int64) { s.limitDiv = div }

const MaxBulkStreamsPerUser = maxBulkStreamsPerUser
