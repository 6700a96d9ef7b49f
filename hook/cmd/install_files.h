/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What `install` writes besides the binary, embedded at build time
 * (install_files.py, from examples/): a binary that carries them installs
 * itself with nothing else beside it.
 */
#ifndef SG_INSTALL_FILES_H
#define SG_INSTALL_FILES_H

/* Where install puts the binary on a node; the hooks.d files name it. */
extern const char sg_install_binary_path[];

/* examples/hooks.d/sysctl-guard-annotated.json: the hook for annotated containers. */
extern const char sg_install_hooks_annotated[];

/* examples/hooks.d/sysctl-guard-baseline.json: the hook for every container. */
extern const char sg_install_hooks_always[];

/* examples/config.json: the node config written where there is none. */
extern const char sg_install_default_config[];

#endif
