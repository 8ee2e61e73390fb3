/*
 * The example langevin application (examples/langevin/run) as one small C
 * program, for the soak: one step of Langevin dynamics for point particles
 * in a harmonic well, with the script's files, configuration keys and exit
 * codes, so that the soak's volunteer runs a real app on the real inputs
 * (each step's outputs are the next step's inputs, their MD5s checked at
 * retrieval) for one exec. The script costs a shell and an awk start a
 * result, a Go program its runtime's start (threads, signal handlers):
 * most of a long soak's processor time. Its numbers differ from awk's
 * (another random source); the demo keeps the script. bench/soak.sh builds
 * it with cc (without cc the soak runs the script).
 *
 * It runs in a directory holding input.coor, input.vel, input.conf
 * (optional) and LICENSE, and writes output.coor, output.vel and
 * progress.log. Configuration lines are "KEY VALUE": steps, dt, gamma,
 * temperature, k, seed; "fail 1" fails (exit 4), "sleep S" sleeps S
 * seconds, "failtimes N FILE" fails the first N runs, counted in FILE.
 * Exit codes: 2 bad inputs, 3 no LICENSE, 4 failing on purpose, 1 a write
 * failed.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void die(int code, const char *msg, const char *arg)
{
	fprintf(stderr, msg, arg);
	fputc('\n', stderr);
	exit(code);
}

/* nonempty says whether path is a file of at least one byte. */
static int nonempty(const char *path)
{
	FILE *f = fopen(path, "r");
	int c;
	if (!f)
		return 0;
	c = fgetc(f);
	fclose(f);
	return c != EOF;
}

/* fields splits line on blanks into at most max fields; their count. */
static int fields(char *line, char **f, int max)
{
	int n = 0;
	char *save = NULL, *t;
	for (t = strtok_r(line, " \t\r\n", &save); t && n < max; t = strtok_r(NULL, " \t\r\n", &save))
		f[n++] = t;
	return n;
}

/* failtimes fails the first n runs, counting them in file (relative to
 * the run directory), for trying retries. */
static void failtimes(long n, const char *file)
{
	long runs = 0;
	int c, last = '\n';
	FILE *f = fopen(file, "r");
	if (f) {
		while ((c = fgetc(f)) != EOF) {
			if (c == '\n')
				runs++;
			last = c;
		}
		if (last != '\n')
			runs++;
		fclose(f);
	}
	f = fopen(file, "a");
	if (!f || fputs("run\n", f) == EOF || fclose(f) != 0)
		die(4, "cannot count runs in %s", file);
	if (runs < n) {
		fprintf(stderr, "failing on purpose, run %ld of the first %ld\n", runs + 1, n);
		exit(4);
	}
}

struct conf {
	long steps, seed;
	double dt, gamma, temp, k;
};

/* readconf reads input.conf's lines in order; fail, sleep and failtimes
 * act when read, as the script's do. */
static void readconf(struct conf *c)
{
	char *line = NULL, *f[3];
	size_t cap = 0;
	FILE *in = fopen("input.conf", "r");
	if (!in)
		return;
	while (getline(&line, &cap, in) != -1) {
		int n = fields(line, f, 3);
		if (n < 2 || f[0][0] == '#')
			continue;
		if (!strcmp(f[0], "steps"))
			c->steps = (long)strtod(f[1], NULL);
		else if (!strcmp(f[0], "dt"))
			c->dt = strtod(f[1], NULL);
		else if (!strcmp(f[0], "gamma"))
			c->gamma = strtod(f[1], NULL);
		else if (!strcmp(f[0], "temperature"))
			c->temp = strtod(f[1], NULL);
		else if (!strcmp(f[0], "k"))
			c->k = strtod(f[1], NULL);
		else if (!strcmp(f[0], "seed"))
			c->seed = (long)strtod(f[1], NULL);
		else if (!strcmp(f[0], "fail"))
			die(4, "configured to fail%s", "");
		else if (!strcmp(f[0], "sleep")) {
			double s = strtod(f[1], NULL);
			if (s > 0) {
				struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
				while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
					;
			}
		} else if (!strcmp(f[0], "failtimes") && n >= 3)
			failtimes((long)strtod(f[1], NULL), f[2]);
	}
	free(line);
	fclose(in);
}

/* vec3s reads the lines of three or more fields of path: x, y, z each. */
static double *vec3s(const char *path, long *count)
{
	char *line = NULL, *f[3];
	size_t cap = 0;
	long n = 0, max = 64;
	double *v = malloc(3 * max * sizeof *v);
	FILE *in = fopen(path, "r");
	if (!in || !v)
		die(2, "cannot read %s", path);
	while (getline(&line, &cap, in) != -1) {
		if (fields(line, f, 3) < 3)
			continue;
		if (n == max) {
			max *= 2;
			if (!(v = realloc(v, 3 * max * sizeof *v)))
				die(2, "%s is too big", path);
		}
		for (int d = 0; d < 3; d++)
			v[3 * n + d] = strtod(f[d], NULL);
		n++;
	}
	free(line);
	fclose(in);
	*count = n;
	return v;
}

/* splitmix64: the random source, seeded from the configuration and the
 * coordinates. */
static uint64_t rng;

static double uniform(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return (double)(z >> 11) * 0x1.0p-53;
}

static double gauss(void)
{
	double u1 = uniform(), u2 = uniform();
	if (u1 < 1e-12)
		u1 = 1e-12;
	return sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
}

/* closeChecked closes f, false when any write to it failed. fclose alone
 * is not enough: a write stdio made earlier that failed (a disk full for a
 * moment) dropped its buffer, and once there is room again the later ones
 * and fclose succeed, leaving a file with lines missing. */
static int closeChecked(FILE *f)
{
	int bad = fflush(f) != 0 || ferror(f);
	return fclose(f) == 0 && !bad;
}

static void write3(const char *path, const double *v, long n)
{
	FILE *out = fopen(path, "w");
	if (!out)
		die(1, "cannot write %s", path);
	for (long i = 0; i < n; i++)
		if (fprintf(out, "%.6f %.6f %.6f\n", v[3 * i], v[3 * i + 1], v[3 * i + 2]) < 0)
			die(1, "cannot write %s", path);
	if (!closeChecked(out))
		die(1, "cannot write %s", path);
}

int main(void)
{
	struct conf c = {100, 1, 0.01, 1, 1, 1};
	long n, nv;
	double *x, *v, h = 0;
	FILE *prog;

	if (!nonempty("LICENSE"))
		die(3, "LICENSE missing%s", "");
	if (!nonempty("input.coor"))
		die(2, "input.coor missing or empty%s", "");
	if (!nonempty("input.vel"))
		die(2, "input.vel missing or empty%s", "");
	readconf(&c);
	v = vec3s("input.vel", &nv);
	x = vec3s("input.coor", &n);
	if (n == 0 || n != nv) {
		fprintf(stderr, "coordinates (%ld) and velocities (%ld) disagree\n", n, nv);
		return 2;
	}
	/* The seed mixes in the coordinates, as the script's does: each step
	 * of a chain draws other numbers, a replica the same. */
	for (long i = 0; i < 3 * n; i++)
		h += x[i] * 1000;
	rng = (uint64_t)c.seed * 1000003 + (uint64_t)(fmod(fabs(h), 1e18));
	double noise = sqrt(2 * c.gamma * c.temp * c.dt);
	if (!(prog = fopen("progress.log", "w")))
		die(1, "cannot write %s", "progress.log");
	for (long s = 1; s <= c.steps; s++) {
		double ekin = 0;
		for (long i = 0; i < n; i++) {
			double *xi = x + 3 * i, *vi = v + 3 * i;
			for (int d = 0; d < 3; d++)
				vi[d] += (-c.k * xi[d] - c.gamma * vi[d]) * c.dt + noise * gauss();
			for (int d = 0; d < 3; d++)
				xi[d] += vi[d] * c.dt;
			ekin += 0.5 * (vi[0] * vi[0] + vi[1] * vi[1] + vi[2] * vi[2]);
		}
		if (s % 10 == 0 || s == c.steps)
			fprintf(prog, "step %ld kinetic_energy %.6f\n", s, ekin);
	}
	if (!closeChecked(prog))
		die(1, "cannot write %s", "progress.log");
	write3("output.coor", x, n);
	write3("output.vel", v, n);
	return 0;
}
