package client

// noFollow: Windows opens no symbolic link by a flag; openPartial's check
// stands alone there.
const noFollow = 0
