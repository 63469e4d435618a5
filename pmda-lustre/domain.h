/*
 * Performance Metrics Domain Number for the Lustre client PMDA
 * (free in PCP 6.0.3 stdpmid and in upstream's free range 166-229).
 */
#define LUSTRECLIENT 220
