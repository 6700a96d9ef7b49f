// SPDX-License-Identifier: Apache-2.0
/*
 * The least a hook can be: a static program without libc or loader that
 * exits at once. Run by runc as both hooks of a container, it is the floor
 * of any hook's cost there (what the runtime's fork, exec and wait, and the
 * kernel's process setup and teardown take); `/bin/true` adds its loader and
 * libc's start to that.
 *
 *   cc -O2 -nostdlib -static -fno-stack-protector -o noop_hook noop_hook.c
 */
#include <sys/syscall.h>

__attribute__((noreturn)) void _start(void)
{
#if defined(__x86_64__)
	__asm__ volatile("syscall" : : "a"(SYS_exit_group), "D"(0) : "rcx", "r11", "memory");
#elif defined(__aarch64__)
	register long nr __asm__("x8") = SYS_exit_group;
	register long status __asm__("x0") = 0;
	__asm__ volatile("svc 0" : : "r"(nr), "r"(status) : "memory");
#else
#error "noop_hook: no exit system call for this architecture"
#endif
	__builtin_unreachable();
}
