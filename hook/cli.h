/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SG_CLI_H
#define SG_CLI_H
#endif
