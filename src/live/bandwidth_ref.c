/*
 * bandwidth_ref.c: the reference table of bandwidth_ref.h.
 *
 * A measured row is a BabelStream triad figure (double precision; bytes
 * read plus bytes written; TB = 10^12 bytes, the convention of oomdoc's
 * own triad) measured on one GPU model and published with the system it
 * ran on.  A part with no such published measurement (the A100 40 GB
 * and 80 GB PCIe, the H100 PCIe and NVL, the H200 NVL, the L40S, the L4,
 * the B200) has a peak row: the peak of NVIDIA's data sheet times
 * BW_REF_PEAK_FRACTION, and every report that prints it says so.  A part
 * with neither gets "no reference for this part".  Names are matched
 * whole, as cuDeviceGetName and nvidia-smi give them (seen in public
 * nvidia-smi output: "NVIDIA A100-PCIE-40GB", "NVIDIA A100 80GB PCIe",
 * "NVIDIA H100 PCIe", "NVIDIA H100 NVL", "NVIDIA L40S", "NVIDIA L4",
 * "NVIDIA B200"), since one marketing name covers parts with different
 * memory (an H100 PCIe is not an H100 SXM, an H200 NVL is not an H200
 * SXM, an A100 40 GB is not an A100 80 GB).
 */
#include <stdio.h>
#include <string.h>

#include "bandwidth_ref.h"

/* The data sheets.  NVIDIA A100 Tensor Core GPU data sheet (1758950-r4):
 * 40GB PCIe 1,555 GB/s, 80GB PCIe 1,935 GB/s, 40GB SXM 1,555 GB/s, 80GB
 * SXM 2,039 GB/s. */
#define DS_A100 "NVIDIA A100 data sheet, https://www.nvidia.com/content/" \
	"dam/en-zz/Solutions/Data-Center/a100/pdf/" \
	"nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf"
/* NVIDIA H100 Tensor Core GPU data sheet: H100 SXM 3.35 TB/s, H100 NVL
 * 3.9 TB/s. */
#define DS_H100 "NVIDIA H100 data sheet, https://resources.nvidia.com/" \
	"en-us-tensor-core/nvidia-tensor-core-gpu-datasheet"
/* NVIDIA H100 PCIe GPU product brief PB-11133-001_v02 (November 2022):
 * "memory bandwidth greater than 2,000 gigabytes per second". */
#define DS_H100_PCIE "NVIDIA H100 PCIe GPU product brief PB-11133-001_v02"
/* NVIDIA H200 Tensor Core GPU data sheet: H200 SXM and H200 NVL, both
 * 4.8 TB/s. */
#define DS_H200 "NVIDIA H200 data sheet, https://nvdam.widen.net/s/" \
	"nb5zzzsjdf/hpc-datasheet-sc23-h200-datasheet-3002446"
#define DS_L40S "NVIDIA L40S data sheet, https://resources.nvidia.com/" \
	"en-us-l40s/l40s-datasheet-28413"
#define DS_L4 "NVIDIA L4 data sheet, https://resources.nvidia.com/" \
	"en-us-data-center-overview/l4-gpu-datasheet"
/* NVIDIA DGX B200 data sheet: eight B200, 64 TB/s of HBM3e bandwidth in
 * all, 8 TB/s each. */
#define DS_B200 "NVIDIA DGX B200 data sheet, https://resources.nvidia.com/" \
	"en-us-dgx-systems/dgx-b200-datasheet"

#define AZURE "Azure/AI-benchmarking-guide, Azure_Results/"

/* A row without a published triad: the peak and its share. */
#define PEAK_ROW(nm, peak, src) { \
	.name = nm, \
	.triad_bps = (peak) * BW_REF_PEAK_FRACTION, \
	.peak_bps = (peak), \
	.measured = false, \
	.how = "no published triad: the data sheet's peak times 0.83, " \
	    "the smallest share of its peak a measured row reaches", \
	.source = src, \
}

static const bw_ref bw_refs[] = {
	{
		.name = "NVIDIA A100-SXM4-80GB",
		.triad_bps = 1.70e12,
		.peak_bps = 2.039e12,
		.measured = true,
		.how = "BabelStream triad on Azure ND A100 v4 (driver "
		    "550.90.07, CUDA 12.5)",
		.source = AZURE "ND_A100_v4_results.md, HBM Bandwidth",
	},
	{
		.name = "NVIDIA H100 80GB HBM3",
		.triad_bps = 2.97e12,
		.peak_bps = 3.35e12,
		.measured = true,
		.how = "BabelStream triad on Azure ND H100 v5, H100 SXM "
		    "(driver 560.35.03, CUDA 12.6)",
		.source = AZURE "ND_H100_v5_results.md, HBM Bandwidth",
	},
	{
		.name = "NVIDIA H200",
		.triad_bps = 4.15e12,
		.peak_bps = 4.8e12,
		.measured = true,
		.how = "BabelStream triad on Azure ND H200 v5, H200 SXM 141GB "
		    "(driver 560.28.03, CUDA 12.6)",
		.source = AZURE "ND_H200_v5_results.md, HBM Bandwidth",
	},
	PEAK_ROW("NVIDIA A100-SXM4-40GB", 1.555e12, DS_A100),
	PEAK_ROW("NVIDIA A100-PCIE-40GB", 1.555e12, DS_A100),
	PEAK_ROW("NVIDIA A100 80GB PCIe", 1.935e12, DS_A100),
	PEAK_ROW("NVIDIA H100 PCIe", 2.0e12, DS_H100_PCIE),
	PEAK_ROW("NVIDIA H100 NVL", 3.9e12, DS_H100),
	PEAK_ROW("NVIDIA H200 NVL", 4.8e12, DS_H200),
	PEAK_ROW("NVIDIA L40S", 864e9, DS_L40S),
	PEAK_ROW("NVIDIA L4", 300e9, DS_L4),
	PEAK_ROW("NVIDIA B200", 8.0e12, DS_B200),
};

#define NVIDIA "NVIDIA "

const bw_ref *
bw_ref_find(const char *name)
{
	size_t i, pre = strlen(NVIDIA);

	if (name == NULL)
		return NULL;
	for (i = 0; i < sizeof bw_refs / sizeof bw_refs[0]; i++) {
		const char *row = bw_refs[i].name;

		if (strcmp(row, name) == 0)
			return &bw_refs[i];
		/* A name from an older driver, without the prefix. */
		if (strncmp(name, NVIDIA, pre) != 0 && strcmp(row + pre,
		    name) == 0)
			return &bw_refs[i];
	}
	return NULL;
}

const bw_ref *
bw_ref_table(size_t *n)
{
	*n = sizeof bw_refs / sizeof bw_refs[0];
	return bw_refs;
}

void
bw_ref_basis(const bw_ref *ref, char *out, size_t cap)
{
	if (ref->measured)
		snprintf(out, cap, "what it reaches in BabelStream");
	else
		snprintf(out, cap, "%.0f%% of its data sheet peak of %.2f TB/s, "
		    "no triad being published", 100.0 * BW_REF_PEAK_FRACTION,
		    ref->peak_bps / 1e12);
}
