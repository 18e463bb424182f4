/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Lock workloads for the locks view's tests and benchmark.  Every mode first
 * writes one byte to stdout ("ready") and blocks reading one byte from stdin
 * ("go"), so the test can start recording first; at the end it prints one
 * JSON line of what it did.
 *
 *   lockdemo snapshot MS DIR   LDB's example: request threads ("req-N") take
 *                              state_lock briefly, a background thread ("bgsnap")
 *                              every 10 ms takes it and, in snapshot_state(),
 *                              copies the state and writes it to a file in DIR
 *                              with fdatasync, for MS ms.  Prints its hold times,
 *                              its contended holds' (from the first request that
 *                              came to wait to the release) and the longest
 *                              pthread_mutex_lock() call.
 *   lockdemo mmap MS N         N threads ("mapper-N") map, touch and unmap
 *                              memory for MS ms: they contend the mm's mmap_lock.
 *   lockdemo bench MS N        N threads, each in a loop: take one shared mutex,
 *                              work 0.5 us in it, work 1 us outside,
 *                              for MS ms; prints operations per second of wall
 *                              time and per second of its own CPU time (user +
 *                              system, which includes BPF programs run in its
 *                              threads' context).
 *   lockdemo words N K         one thread makes K futex(FUTEX_WAIT) calls on
 *                              each of N futex words, each sleeping until its
 *                              200 us timeout (nobody wakes it): N lock keys of
 *                              K waits each.  Prints the calls made, how
 *                              many timed out, and how many times the thread
 *                              went to sleep in them (a call whose timer fired
 *                              before it got off the CPU never sleeps).
 *   lockdemo barge MS N        N rounds on one mutex, each: the main thread
 *                              holds it while two threads wait in the kernel
 *                              (futex(FUTEX_WAIT) on its word, as glibc's lock
 *                              does, but they never take it); it releases,
 *                              waking the first ("woken"), and "barger" takes
 *                              the lock at once, with no kernel event, and
 *                              holds it MS ms in barge_hold().  "woken" comes
 *                              back MS/2 ms later and waits again (for at
 *                              most MS ms); barger's release wakes the other
 *                              ("waiter", which gives up after MS + 300 ms).
 *                              Prints barger's holds 1.5 s after the last.
 *   lockdemo crowd N K         N threads ("crowd-N") wait at once: K rounds, in
 *                              each every thread makes one futex(FUTEX_WAIT)
 *                              call on a word of its own, sleeping until its
 *                              20 ms timeout, then all meet before the next
 *                              round (spinning on sched_yield: these are the
 *                              process's only futex waits).  Prints the calls
 *                              made, how many timed out, and how many times
 *                              the threads went to sleep in them.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <linux/futex.h>
#include "helper.h"

#define NREQ 3
#define STATE_BYTES (256 * 1024)
#define MAX_HOLDS 4096
#define BENCH_LOCKS 1

static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;
static char state[STATE_BYTES];
static char snap_buf[STATE_BYTES];
static volatile int stop;
static volatile uint64_t requests;
static uint64_t holds_ns[MAX_HOLDS];
static size_t nholds;
static int snap_fd;
static long run_ms;
static uint64_t lock_max_ns;	/* the longest pthread_mutex_lock() call on state_lock */
/* bgsnap's contended holds: from the first request that came to wait while
 * it held state_lock (bg_holds set) to its release, as latop(1)'s hold. */
static volatile int bg_holds;
static uint64_t first_wait_ns;
static uint64_t contended_ns[MAX_HOLDS];
static size_t ncontended;

/* Take state_lock, keeping the longest time a call took (a wait the kernel
 * sees is inside one). */
static void state_lock_timed(void)
{
	uint64_t t0 = now_ns(), d, m, none = 0;

	if (bg_holds)
		__atomic_compare_exchange_n(&first_wait_ns, &none, t0, 0, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED);
	pthread_mutex_lock(&state_lock);
	d = now_ns() - t0;
	m = __atomic_load_n(&lock_max_ns, __ATOMIC_RELAXED);
	while (d > m && !__atomic_compare_exchange_n(&lock_max_ns, &m, d, 0, __ATOMIC_RELAXED,
						     __ATOMIC_RELAXED))
		;
}

/* Spin for about ns nanoseconds. */
static void busy_ns(uint64_t ns)
{
	uint64_t end = now_ns() + ns;

	while (now_ns() < end)
		;
}

/* One request: update the shared state under the lock, then work outside it. */
static void *request_main(void *arg)
{
	unsigned long i = (unsigned long)arg, n = 0;
	char name[16];

	snprintf(name, sizeof(name), "req-%lu", i);
	pthread_setname_np(pthread_self(), name);
	while (!stop) {
		state_lock_timed();
		state[(n * 64 + i) % STATE_BYTES]++;
		busy_ns(2000);
		pthread_mutex_unlock(&state_lock);
		__atomic_add_fetch(&requests, 1, __ATOMIC_RELAXED);
		busy_ns(10000);
		if (++n % 20 == 0)
			usleep(200);
	}
	return NULL;
}

/* Serialize the state and write it out durably: called with state_lock held. */
static __attribute__((noinline)) void snapshot_state(void)
{
	uint32_t sum = 0;
	size_t i;
	int pass;

	for (pass = 0; pass < 4; pass++) {
		for (i = 0; i < sizeof(snap_buf); i++) {
			sum = sum * 31 + (uint8_t)state[i];
			snap_buf[i] = (char)(state[i] ^ (sum >> 24));
		}
	}
	if (pwrite(snap_fd, snap_buf, sizeof(snap_buf), 0) != (ssize_t)sizeof(snap_buf))
		die("writing the snapshot");
	if (fdatasync(snap_fd))
		die("fdatasync of the snapshot");
}

/* Every 10 ms: snapshot the state while holding its lock. */
static void *bgsnap_main(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "bgsnap");
	while (!stop) {
		uint64_t t0;

		uint64_t first, end;

		sleep_ms(10);
		state_lock_timed();
		__atomic_store_n(&first_wait_ns, 0, __ATOMIC_RELAXED);
		bg_holds = 1;
		t0 = now_ns();
		snapshot_state();
		end = now_ns();
		bg_holds = 0;
		first = __atomic_load_n(&first_wait_ns, __ATOMIC_RELAXED);
		if (nholds < MAX_HOLDS)
			holds_ns[nholds++] = end - t0;
		if (first && first < end && ncontended < MAX_HOLDS)
			contended_ns[ncontended++] = end - first;
		pthread_mutex_unlock(&state_lock);
	}
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* LDB's example: request threads and a background snapshot holding their lock. */
static void run_snapshot(const char *dir)
{
	pthread_t req[NREQ], bg;
	char path[4096];
	unsigned long i;

	snprintf(path, sizeof(path), "%s/lockdemo.snap", dir);
	snap_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (snap_fd < 0)
		die(path);
	handshake();
	for (i = 0; i < NREQ; i++)
		if (pthread_create(&req[i], NULL, request_main, (void *)i))
			die("pthread_create");
	if (pthread_create(&bg, NULL, bgsnap_main, NULL))
		die("pthread_create");
	sleep_ms(run_ms);
	stop = 1;
	for (i = 0; i < NREQ; i++)
		pthread_join(req[i], NULL);
	pthread_join(bg, NULL);
	close(snap_fd);
	unlink(path);
	qsort(holds_ns, nholds, sizeof(holds_ns[0]), cmp_u64);
	qsort(contended_ns, ncontended, sizeof(contended_ns[0]), cmp_u64);
	printf("{\"pid\": %d, \"requests\": %llu, \"holds\": %zu, \"hold_p50_ns\": %llu, "
	       "\"hold_max_ns\": %llu, \"lock_max_ns\": %llu, \"contended\": %zu, "
	       "\"contended_p50_ns\": %llu}\n", getpid(),
	       (unsigned long long)requests, nholds,
	       (unsigned long long)(nholds ? holds_ns[nholds / 2] : 0),
	       (unsigned long long)(nholds ? holds_ns[nholds - 1] : 0),
	       (unsigned long long)lock_max_ns, ncontended,
	       (unsigned long long)(ncontended ? contended_ns[ncontended / 2] : 0));
}

/* Map, touch and unmap memory until stopped: each map and unmap takes mmap_lock. */
static void *mapper_main(void *arg)
{
	unsigned long i = (unsigned long)arg, n = 0;
	char name[16];

	snprintf(name, sizeof(name), "mapper-%lu", i);
	pthread_setname_np(pthread_self(), name);
	while (!stop) {
		char *p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		size_t off;

		if (p == MAP_FAILED)
			die("mmap");
		for (off = 0; off < (1 << 20); off += 4096)
			p[off] = 1;
		munmap(p, 1 << 20);
		n++;
	}
	__atomic_add_fetch(&requests, n, __ATOMIC_RELAXED);
	return NULL;
}

static pthread_mutex_t bench_locks[BENCH_LOCKS];
static uint64_t bench_counts[BENCH_LOCKS];

/* Take the shared lock in a loop with work in and out of it; count operations. */
static void *bench_main(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;
	uint64_t n = 0;

	while (!stop) {
		unsigned int k = rand_r(&seed) % BENCH_LOCKS;

		pthread_mutex_lock(&bench_locks[k]);
		bench_counts[k]++;
		busy_ns(500);
		pthread_mutex_unlock(&bench_locks[k]);
		busy_ns(1000);
		n++;
	}
	__atomic_add_fetch(&requests, n, __ATOMIC_RELAXED);
	return NULL;
}

/* Make k FUTEX_WAIT calls on each of n words; print how many. */
static void run_words(long n, long k)
{
	uint32_t *words = calloc((size_t)n, sizeof(*words));
	struct timespec to = {0, 200000};
	uint64_t calls = 0, timedout = 0, slept = 0;
	struct rusage r0, r1;
	long i, j;

	if (!words)
		die("calloc");
	handshake();
	for (j = 0; j < k; j++)
		for (i = 0; i < n; i++) {
			calls++;
			getrusage(RUSAGE_THREAD, &r0);
			if (syscall(SYS_futex, &words[i], FUTEX_WAIT_PRIVATE, 0, &to, NULL, 0) &&
			    errno == ETIMEDOUT)
				timedout++;
			getrusage(RUSAGE_THREAD, &r1);
			slept += (uint64_t)(r1.ru_nvcsw - r0.ru_nvcsw);
		}
	printf("{\"pid\": %d, \"mode\": \"words\", \"calls\": %llu, \"timedout\": %llu, "
	       "\"slept\": %llu}\n", getpid(), (unsigned long long)calls,
	       (unsigned long long)timedout, (unsigned long long)slept);
	free(words);
}

static long crowd_n, crowd_k, crowd_arrived, crowd_done;
static uint64_t crowd_calls, crowd_timedout, crowd_slept;

/* One thread of the crowd: crowd_k waits of 20 ms on its own word, in step. */
static void *crowd_main(void *arg)
{
	struct timespec to = {0, 20000000};
	uint32_t word = 0;
	struct rusage r0, r1;
	char name[16];
	long j;

	snprintf(name, sizeof(name), "crowd-%lu", (unsigned long)(uintptr_t)arg);
	pthread_setname_np(pthread_self(), name);
	for (j = 0; j < crowd_k; j++) {
		__atomic_add_fetch(&crowd_arrived, 1, __ATOMIC_ACQ_REL);
		while (__atomic_load_n(&crowd_arrived, __ATOMIC_ACQUIRE) < crowd_n * (j + 1))
			sched_yield();
		__atomic_add_fetch(&crowd_calls, 1, __ATOMIC_RELAXED);
		getrusage(RUSAGE_THREAD, &r0);
		if (syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &to, NULL, 0) &&
		    errno == ETIMEDOUT)
			__atomic_add_fetch(&crowd_timedout, 1, __ATOMIC_RELAXED);
		getrusage(RUSAGE_THREAD, &r1);
		__atomic_add_fetch(&crowd_slept, (uint64_t)(r1.ru_nvcsw - r0.ru_nvcsw),
				   __ATOMIC_RELAXED);
	}
	__atomic_add_fetch(&crowd_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static pthread_mutex_t barge_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile int barge_go, barge_done, barge_waits;
static volatile pid_t barge_tid;
static uint64_t barge_ns;

/* Wait in the kernel on barge_lock's word, as glibc's lock does when it is
 * held (word 2: held with waiters), for at most ms; or (ms 0) until woken,
 * then again MS/2 ms later, for at most MS ms. */
static void *barge_wait(void *arg)
{
	long ms = (long)(intptr_t)arg;
	struct timespec to = {ms / 1000, (ms % 1000) * 1000000};
	int *word = &barge_lock.__data.__lock;

	pthread_setname_np(pthread_self(), ms ? "waiter" : "woken");
	__atomic_exchange_n(word, 2, __ATOMIC_ACQ_REL);
	barge_tid = (pid_t)syscall(SYS_gettid);
	if (syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, 2, ms ? &to : NULL, NULL, 0) &&
	    errno != ETIMEDOUT && errno != EAGAIN)
		die("futex wait");
	if (!ms) {
		/* Back late, as a woken waiter may be: the lock is barger's, and
		 * it waits again (barger's release wakes the first waiter). */
		to.tv_sec = run_ms / 1000;
		to.tv_nsec = (run_ms % 1000) * 1000000;
		sleep_ms(run_ms / 2);
		__atomic_exchange_n(word, 2, __ATOMIC_ACQ_REL);
		if (syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, 2, &to, NULL, 0) &&
		    errno != ETIMEDOUT && errno != EAGAIN)
			die("futex wait");
	}
	__atomic_add_fetch(&barge_waits, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* What barger does while it holds the lock: work for run_ms, the clock
 * (the vDSO's) read once every 10,000 steps. */
static __attribute__((noinline)) void barge_hold(void)
{
	uint64_t t0 = now_ns();
	volatile uint32_t x = 1;
	int i;

	while (now_ns() - t0 < (uint64_t)run_ms * 1000000)
		for (i = 0; i < 10000; i++)
			x = x * 31 + 7;
}

/* Take barge_lock as soon as it is released, hold it in barge_hold(). */
static void *barge_main(void *arg)
{
	long rounds = (long)(intptr_t)arg, r;

	pthread_setname_np(pthread_self(), "barger");
	for (r = 0; r < rounds; r++) {
		uint64_t t0;

		while (__atomic_load_n(&barge_go, __ATOMIC_ACQUIRE) <= r)
			sched_yield();
		pthread_mutex_lock(&barge_lock);
		t0 = now_ns();
		barge_hold();
		barge_ns += now_ns() - t0;
		pthread_mutex_unlock(&barge_lock);
		__atomic_store_n(&barge_done, r + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

/* Return true when thread t of this process sleeps in futex(2): off its
 * run queue in a futex wait (its wchan; /proc's syscall file names futex
 * already while the thread, preempted, has yet to sleep). */
static int in_futex(pid_t t)
{
	char path[64], buf[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/wchan", (int)t);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	return !strncmp(buf, "futex", 5);
}

/* Start barge_wait(ms), detached, and return once it sleeps in the kernel. */
static void barge_waiter(long ms)
{
	pthread_attr_t a;
	pthread_t t;
	pid_t tid;

	barge_tid = 0;
	if (pthread_attr_init(&a) || pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED) ||
	    pthread_create(&t, &a, barge_wait, (void *)(intptr_t)ms))
		die("pthread_create");
	pthread_attr_destroy(&a);
	while (!(tid = barge_tid))
		sleep_ms(1);
	while (!in_futex(tid))
		sleep_ms(1);
	sleep_ms(2);	/* past the switch that put it to sleep */
}

/* n rounds of a barged-in hold (see the top of this file).  Nothing is
 * joined (a join waits on a futex): the ends are awaited by sleeping. */
static void run_barge(long n)
{
	pthread_attr_t a;
	pthread_t b;
	long r;

	handshake();
	if (pthread_attr_init(&a) || pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED) ||
	    pthread_create(&b, &a, barge_main, (void *)(intptr_t)n))
		die("pthread_create");
	pthread_attr_destroy(&a);
	for (r = 0; r < n; r++) {
		pthread_mutex_lock(&barge_lock);
		barge_waiter(0);
		barge_waiter(run_ms + 300);
		pthread_mutex_unlock(&barge_lock);
		__atomic_store_n(&barge_go, r + 1, __ATOMIC_RELEASE);
		while (__atomic_load_n(&barge_waits, __ATOMIC_ACQUIRE) < 2 * (r + 1) ||
		       __atomic_load_n(&barge_done, __ATOMIC_ACQUIRE) <= r)
			sleep_ms(1);
	}
	/* Alive a while yet: a recorder reads its last samples' stacks. */
	sleep_ms(1500);
	printf("{\"pid\": %d, \"mode\": \"barge\", \"rounds\": %ld, \"hold_ns\": %llu}\n",
	       getpid(), n, (unsigned long long)barge_ns);
}

/* Run n threads that wait at once, k rounds; print how many waits.  The
 * threads are not joined (a join may wait on a futex): their end is awaited
 * by sleeping. */
static void run_crowd(long n, long k)
{
	pthread_t *t = calloc((size_t)n, sizeof(*t));
	long i;

	if (!t || n < 1)
		die("calloc");
	crowd_n = n;
	crowd_k = k;
	handshake();
	for (i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, crowd_main, (void *)(uintptr_t)(i + 1)))
			die("pthread_create");
	while (__atomic_load_n(&crowd_done, __ATOMIC_ACQUIRE) < n)
		sleep_ms(5);
	printf("{\"pid\": %d, \"mode\": \"crowd\", \"calls\": %llu, \"timedout\": %llu, "
	       "\"slept\": %llu}\n", getpid(), (unsigned long long)crowd_calls,
	       (unsigned long long)crowd_timedout, (unsigned long long)crowd_slept);
	free(t);
}

/* Run n threads of fn for run_ms; print operations per second. */
static void run_threads(void *(*fn)(void *), long n, const char *mode)
{
	pthread_t *t = calloc((size_t)n, sizeof(*t));
	struct rusage ru;
	uint64_t t0;
	double cpu_s;
	long i;

	if (!t)
		die("calloc");
	handshake();
	t0 = now_ns();
	for (i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, fn, (void *)(uintptr_t)(i + 1)))
			die("pthread_create");
	sleep_ms(run_ms);
	stop = 1;
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	getrusage(RUSAGE_SELF, &ru);
	cpu_s = ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
		(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
	printf("{\"pid\": %d, \"mode\": \"%s\", \"ops\": %llu, \"ops_per_s\": %.0f, "
	       "\"cpu_s\": %.3f, \"ops_per_cpu_s\": %.0f}\n", getpid(), mode,
	       (unsigned long long)requests, requests * 1e9 / (double)(now_ns() - t0), cpu_s,
	       cpu_s > 0 ? requests / cpu_s : 0);
	free(t);
}

int main(int argc, char **argv)
{
	long i;

	if (argc != 4) {
		fprintf(stderr, "usage: lockdemo snapshot MS DIR | mmap MS N | bench MS N | "
			"words N K | crowd N K | barge MS N\n");
		return 2;
	}
	run_ms = atol(argv[2]);
	setvbuf(stdout, NULL, _IONBF, 0);
	if (!strcmp(argv[1], "snapshot")) {
		run_snapshot(argv[3]);
	} else if (!strcmp(argv[1], "mmap")) {
		run_threads(mapper_main, atol(argv[3]), "mmap");
	} else if (!strcmp(argv[1], "words")) {
		run_words(atol(argv[2]), atol(argv[3]));
	} else if (!strcmp(argv[1], "barge")) {
		run_barge(atol(argv[3]));
	} else if (!strcmp(argv[1], "crowd")) {
		run_crowd(atol(argv[2]), atol(argv[3]));
	} else if (!strcmp(argv[1], "bench")) {
		for (i = 0; i < BENCH_LOCKS; i++)
			pthread_mutex_init(&bench_locks[i], NULL);
		run_threads(bench_main, atol(argv[3]), "bench");
	} else {
		fprintf(stderr, "lockdemo: unknown mode '%s'\n", argv[1]);
		return 2;
	}
	return 0;
}
