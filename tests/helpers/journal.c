/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A journal: a flusher thread ("flusher") that, every 5 ms, takes the
 * journal mutex in flush_journal() and holds it across a pwrite() and an
 * fsync() of a file in DIR, while worker threads ("worker-N") append
 * records to it under the same mutex, briefly, in append_record(), and
 * work outside it in worker().  Built twice (Makefile): journal with frame
 * pointers, journal-nofp with none at all (-fomit-frame-pointer -O2), so a
 * test can compare the holder functions the locks view finds in each.
 *
 *   journal MS DIR   run for MS ms; first write one byte to stdout ("ready")
 *                    and block reading one from stdin ("go").  At the end
 *                    print one JSON line: flushes, appends, the flusher's tid.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "helper.h"

#define NWORKERS 3
#define FLUSH_BYTES (256 * 1024)
#define JOURNAL_BYTES (64 * 1024)

static pthread_mutex_t journal_lock = PTHREAD_MUTEX_INITIALIZER;
static char journal[JOURNAL_BYTES];
static char flush_buf[FLUSH_BYTES];
static size_t journal_len;
static volatile int stop;
static volatile uint64_t appends, flushes;
static volatile long flusher_tid;
static int fd;

/* Spin for about ns nanoseconds (outside the lock). */
static __attribute__((noinline)) void busy_ns(uint64_t ns)
{
	uint64_t end = now_ns() + ns;

	while (now_ns() < end)
		;
}

/* Write the journal out and make it durable, holding the lock throughout. */
static __attribute__((noinline)) void flush_journal(void)
{
	pthread_mutex_lock(&journal_lock);
	memcpy(flush_buf, journal, sizeof(journal));
	if (pwrite(fd, flush_buf, sizeof(flush_buf), 0) != (ssize_t)sizeof(flush_buf))
		die("pwrite");
	if (fsync(fd))
		die("fsync");
	journal_len = 0;
	pthread_mutex_unlock(&journal_lock);
	__asm__ volatile("" ::: "memory");	/* no tail call: flush_journal stays a frame */
}

static void *flusher(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "flusher");
	flusher_tid = syscall(SYS_gettid);
	while (!stop) {
		flush_journal();
		flushes++;
		sleep_ms(5);
	}
	return NULL;
}

/* Add one record to the journal under the lock. */
static __attribute__((noinline)) void append_record(unsigned long id)
{
	pthread_mutex_lock(&journal_lock);
	journal[journal_len++ % JOURNAL_BYTES] = (char)id;
	pthread_mutex_unlock(&journal_lock);
	__asm__ volatile("" ::: "memory");
}

static void *worker(void *arg)
{
	unsigned long i = (unsigned long)arg;
	char name[16];

	snprintf(name, sizeof(name), "worker-%lu", i);
	pthread_setname_np(pthread_self(), name);
	while (!stop) {
		append_record(i);
		__atomic_add_fetch(&appends, 1, __ATOMIC_RELAXED);
		busy_ns(20000);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t ft, wt[NWORKERS];
	char path[4096];
	unsigned long i;
	long ms;

	if (argc != 3) {
		fprintf(stderr, "usage: journal MS DIR\n");
		return 2;
	}
	ms = atol(argv[1]);
	snprintf(path, sizeof(path), "%s/journal.dat", argv[2]);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		die("open");
	handshake();
	if (pthread_create(&ft, NULL, flusher, NULL))
		die("pthread_create");
	for (i = 0; i < NWORKERS; i++)
		if (pthread_create(&wt[i], NULL, worker, (void *)i))
			die("pthread_create");
	sleep_ms(ms);
	stop = 1;
	pthread_join(ft, NULL);
	for (i = 0; i < NWORKERS; i++)
		pthread_join(wt[i], NULL);
	close(fd);
	unlink(path);
	printf("{\"flushes\": %llu, \"appends\": %llu, \"flusher_tid\": %ld}\n",
	       (unsigned long long)flushes, (unsigned long long)appends, flusher_tid);
	return 0;
}
