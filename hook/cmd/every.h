/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A command run again every few seconds until SIGTERM or SIGINT: the main
 * process of a DaemonSet's container, whose image has no shell to loop in.
 */
#ifndef SG_EVERY_H
#define SG_EVERY_H

/*
 * Runs @run(@arg) now and every @seconds after, until SIGTERM or SIGINT,
 * which end it with status 0 (a failed run is reported by @run and does not
 * stop the loop). @what names the command in the line said on stopping.
 */
int sg_every(unsigned seconds, const char *what, void (*run)(void *arg), void *arg);

#endif
