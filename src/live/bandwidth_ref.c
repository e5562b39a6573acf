/*
 * bandwidth_ref.c: the reference table of bandwidth_ref.h.
 *
 * Each row is a BabelStream triad figure (double precision; bytes read
 * plus bytes written; TB = 10^12 bytes, the convention of oomdoc's own
 * triad) measured on one GPU model and published with the system it ran
 * on.  Only parts with such a published measurement have a row: the
 * H100 PCIe and NVL, the A100 40 GB, the L40S and the B200 have none
 * yet, and get "no reference for this part" rather than a figure derived
 * from their data sheets.  Names are matched whole, since one marketing
 * name covers parts with different memory (an H100 PCIe is not an H100
 * SXM, an H200 NVL is not an H200 SXM).
 */
#include <stddef.h>
#include <string.h>

#include "bandwidth_ref.h"

static const bw_ref bw_refs[] = {
	{
		.name = "NVIDIA A100-SXM4-80GB",
		.triad_bps = 1.70e12,
		.how = "BabelStream triad on Azure ND A100 v4 (driver "
		    "550.90.07, CUDA 12.5)",
		.source = "Azure/AI-benchmarking-guide, "
		    "Azure_Results/ND_A100_v4_results.md, HBM Bandwidth",
	},
	{
		.name = "NVIDIA H100 80GB HBM3",
		.triad_bps = 2.97e12,
		.how = "BabelStream triad on Azure ND H100 v5, H100 SXM "
		    "(driver 560.35.03, CUDA 12.6)",
		.source = "Azure/AI-benchmarking-guide, "
		    "Azure_Results/ND_H100_v5_results.md, HBM Bandwidth",
	},
	{
		.name = "NVIDIA H200",
		.triad_bps = 4.15e12,
		.how = "BabelStream triad on Azure ND H200 v5, H200 SXM 141GB "
		    "(driver 560.28.03, CUDA 12.6)",
		.source = "Azure/AI-benchmarking-guide, "
		    "Azure_Results/ND_H200_v5_results.md, HBM Bandwidth",
	},
};

const bw_ref *
bw_ref_find(const char *name)
{
	size_t i;

	if (name == NULL)
		return NULL;
	for (i = 0; i < sizeof bw_refs / sizeof bw_refs[0]; i++)
		if (strcmp(bw_refs[i].name, name) == 0)
			return &bw_refs[i];
	return NULL;
}
