-- The state database as the release before schema versions made it (no user_version),
-- with a few rows of every table: TestUpgradeFromPreviousRelease loads it and opens it.
CREATE TABLE users (
	id         INTEGER PRIMARY KEY,
	name       TEXT NOT NULL UNIQUE COLLATE NOCASE,
	token_hash TEXT NOT NULL UNIQUE,
	disabled   INTEGER NOT NULL DEFAULT 0,
	created    INTEGER NOT NULL
);
CREATE TABLE chains (
	id         INTEGER PRIMARY KEY,
	user_id    INTEGER NOT NULL REFERENCES users(id),
	grp        TEXT NOT NULL,
	name       TEXT NOT NULL,
	queue      TEXT NOT NULL,
	app        TEXT NOT NULL,
	tag        TEXT NOT NULL,
	nsteps     INTEGER NOT NULL,
	priority   INTEGER NOT NULL,
	params     TEXT NOT NULL,        -- JSON boinc.WorkParams
	wu_tmpl    TEXT NOT NULL,        -- create_work WU template, relative to the project
	res_tmpl   TEXT NOT NULL,        -- create_work result template, relative to the project
	layout     TEXT NOT NULL,        -- JSON: the queue's inputs and outputs at submission
	state      TEXT NOT NULL,        -- running, done, failed, stopped, purged
	steps_done INTEGER NOT NULL DEFAULT 0,
	error      TEXT NOT NULL DEFAULT '',
	created    INTEGER NOT NULL,
	updated    INTEGER NOT NULL
);
CREATE TABLE chain_inputs (   -- each input slot's content for step 0 and unchained slots
	chain_id INTEGER NOT NULL REFERENCES chains(id),
	pos      INTEGER NOT NULL,
	md5      TEXT NOT NULL,
	PRIMARY KEY (chain_id, pos)
);
CREATE TABLE steps (
	chain_id INTEGER NOT NULL REFERENCES chains(id),
	step     INTEGER NOT NULL,
	wu_name  TEXT NOT NULL UNIQUE,
	state    TEXT NOT NULL,           -- creating, pending, queued, done, failed
	created  INTEGER NOT NULL,
	finished INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (chain_id, step)
);
CREATE TABLE step_inputs (    -- what each step reads, by input position
	wu_name TEXT NOT NULL,
	pos     INTEGER NOT NULL,
	md5     TEXT NOT NULL,
	PRIMARY KEY (wu_name, pos)
);
CREATE TABLE results (
	id       INTEGER PRIMARY KEY,
	chain_id INTEGER NOT NULL REFERENCES chains(id),
	step     INTEGER NOT NULL,
	idx      INTEGER NOT NULL,
	file     TEXT NOT NULL,           -- <wu>_<idx>, the name in the results area
	md5      TEXT NOT NULL,
	size     INTEGER NOT NULL,
	acked    INTEGER NOT NULL DEFAULT 0,
	UNIQUE (chain_id, step, idx)
);
CREATE TABLE pool (
	md5     TEXT PRIMARY KEY,
	size    INTEGER NOT NULL,
	touched INTEGER NOT NULL
);
CREATE TABLE uploads (
	id      TEXT PRIMARY KEY,
	user_id INTEGER NOT NULL REFERENCES users(id),
	created INTEGER NOT NULL
);
CREATE UNIQUE INDEX chains_live ON chains(user_id, grp, name) WHERE state != 'purged';
CREATE INDEX chains_group ON chains(user_id, grp);
CREATE INDEX chains_name ON chains(user_id, grp, name);
CREATE INDEX chain_inputs_md5 ON chain_inputs(md5);
CREATE INDEX steps_pending ON steps(state) WHERE state = 'pending';
CREATE INDEX step_inputs_md5 ON step_inputs(md5);
CREATE INDEX results_pending ON results(chain_id) WHERE acked = 0;
CREATE INDEX results_file ON results(file);
INSERT INTO users(id, name, token_hash, disabled, created) VALUES (1, 'alice', 'hash-alice', 0, 1796352577);
INSERT INTO users(id, name, token_hash, disabled, created) VALUES (2, 'bob', 'hash-bob', 1, 1796352577);
INSERT INTO chains(id, user_id, grp, name, queue, app, tag, nsteps, priority, params, wu_tmpl, res_tmpl, layout, state, steps_done, error, created, updated) VALUES (1, 1, 'g', 'c1', 'langevin', 'langevin', 'RND4964', 3, 5, '{"App":"langevin","TargetUser":1}', 'templates/rboinc/aa_in', 'templates/rboinc/aa_out', '{"inputs":[{"slot":0,"open_name":"in.coor"}],"outputs":[{"index":0,"open_name":"out.coor","chain_pos":0}]}', 'running', 1, '', 1796352577, 1796352577);
INSERT INTO chains(id, user_id, grp, name, queue, app, tag, nsteps, priority, params, wu_tmpl, res_tmpl, layout, state, steps_done, error, created, updated) VALUES (2, 1, 'g', 'c2', 'langevin', 'langevin', 'RND2606', 1, 0, '{"App":"langevin"}', 'templates/rboinc/aa_in', 'templates/rboinc/aa_out', '{}', 'failed', 0, 'work unit failed in BOINC (error mask 2: too many error results)', 1796352577, 1796352577);
INSERT INTO chain_inputs(chain_id, pos, md5) VALUES (1, 0, '00000000000000000000000000000abd');
INSERT INTO chain_inputs(chain_id, pos, md5) VALUES (1, 1, '00000000000000000000000000000abe');
INSERT INTO chain_inputs(chain_id, pos, md5) VALUES (2, 0, '00000000000000000000000000000abd');
INSERT INTO chain_inputs(chain_id, pos, md5) VALUES (2, 1, '00000000000000000000000000000abf');
INSERT INTO steps(chain_id, step, wu_name, state, created, finished) VALUES (1, 0, 'c1-ALICE_g-0-3-RND4964', 'done', 1796352577, 1796352577);
INSERT INTO steps(chain_id, step, wu_name, state, created, finished) VALUES (2, 0, 'c2-ALICE_g-0-1-RND2606', 'failed', 1796352577, 1796352577);
INSERT INTO steps(chain_id, step, wu_name, state, created, finished) VALUES (1, 1, 'c1-ALICE_g-1-3-RND4964', 'pending', 1796352577, 0);
INSERT INTO step_inputs(wu_name, pos, md5) VALUES ('c1-ALICE_g-0-3-RND4964', 0, '00000000000000000000000000000abd');
INSERT INTO step_inputs(wu_name, pos, md5) VALUES ('c1-ALICE_g-0-3-RND4964', 1, '00000000000000000000000000000abe');
INSERT INTO step_inputs(wu_name, pos, md5) VALUES ('c2-ALICE_g-0-1-RND2606', 0, '00000000000000000000000000000abd');
INSERT INTO step_inputs(wu_name, pos, md5) VALUES ('c2-ALICE_g-0-1-RND2606', 1, '00000000000000000000000000000abf');
INSERT INTO step_inputs(wu_name, pos, md5) VALUES ('c1-ALICE_g-1-3-RND4964', 0, '00000000000000000000000000000ac0');
INSERT INTO step_inputs(wu_name, pos, md5) VALUES ('c1-ALICE_g-1-3-RND4964', 1, '00000000000000000000000000000abe');
INSERT INTO results(id, chain_id, step, idx, file, md5, size, acked) VALUES (1, 1, 0, 0, 'c1-ALICE_g-0-3-RND4964_0', '00000000000000000000000000000ac0', 44, 0);
INSERT INTO pool(md5, size, touched) VALUES ('00000000000000000000000000000abd', 11, 1796352577);
INSERT INTO pool(md5, size, touched) VALUES ('00000000000000000000000000000abe', 22, 1796352577);
INSERT INTO pool(md5, size, touched) VALUES ('00000000000000000000000000000abf', 33, 1796352577);
INSERT INTO pool(md5, size, touched) VALUES ('00000000000000000000000000000ac0', 44, 1796352577);
INSERT INTO uploads(id, user_id, created) VALUES ('up0123456789abcdef0123456789abcdef', 1, 1796352577);
