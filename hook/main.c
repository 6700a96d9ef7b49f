// SPDX-License-Identifier: Apache-2.0
#include "sysctl_guard.skel.h"
int main(void)
{
	return 0;
}
