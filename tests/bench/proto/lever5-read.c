/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lever5-read.c - issue 20 lever 5 prototype (not part of the build):
 * 1 MiB reads of a lower file at the 40-byte header offset, decrypted
 * with the chosen core, four ways: 0 pread into the reply buffer and
 * decrypt in place (what content_read() does), 1 one mapping of the
 * whole file kept, MADV_POPULATE_READ of the range, decrypt from the
 * mapping into the reply buffer, 2 the same without the populate (page
 * faults), 3 mode 0 plus readahead(2) of the next 4 MiB every 4 MiB.
 * Prints GB/s of plaintext. doc/PERFORMANCE.md has the numbers.
 *
 * Build: gcc -O2 -Isrc/crypto tests/bench/proto/lever5-read.c \
 *            build/src/crypto/libxtscrypto.a -o /tmp/lever5-read
 * Run:   /tmp/lever5-read FILE MODE REPS   (drop caches first for cold)
 */
#define _GNU_SOURCE
#include "xts.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec/1e9;}
int main(int argc,char**argv){
	const char *path=argv[1]; int mode=atoi(argv[2]); int reps=atoi(argv[3]);
	int fd=open(path,O_RDONLY); off_t sz=lseek(fd,0,SEEK_END);
	size_t chunk=1<<20; uint64_t hdr=40; uint64_t n=(sz-hdr)/chunk;
	const struct xts_backend *be; if(xts_choose(NULL,&be)){puts("core");return 1;}
	uint8_t key[64]; for(int i=0;i<64;i++)key[i]=i; struct xts_ctx*ctx; if(xts_ctx_new(&ctx,be,key))return 1;
	uint8_t id[16]={1}; uint8_t*buf=aligned_alloc(4096,chunk);
	uint8_t*map=NULL; if(mode==1||mode==2)map=mmap(NULL,sz,PROT_READ,MAP_SHARED,fd,0);
	double t0=now();
	for(int r=0;r<reps;r++) for(uint64_t i=0;i<n;i++){
		uint64_t off=hdr+i*chunk;
		if(mode==3){ if(i%4==0) readahead(fd,off+4*chunk,4*chunk); if(pread(fd,buf,chunk,off)!=(ssize_t)chunk)return 2; (void)!xts_decrypt_units(ctx,buf,buf,chunk/4096,id,i*256); continue; }
		if(mode==0){ if(pread(fd,buf,chunk,off)!=(ssize_t)chunk)return 2; (void)!xts_decrypt_units(ctx,buf,buf,chunk/4096,id,i*256); }
		else { if(mode==1){ uintptr_t a=((uintptr_t)(map+off))&~4095UL; if(madvise((void*)a,chunk+4096,MADV_POPULATE_READ))return 3; }
		       (void)!xts_decrypt_units(ctx,buf,map+off,chunk/4096,id,i*256); }
	}
	double t=now()-t0; printf("mode %d (%s): %.2f GB/s\n",mode,mode==0?"pread+in place":mode==1?"mmap+populate":mode==2?"mmap faults":"pread+readahead(2) 4 MiB ahead",(double)n*chunk*reps/t/1e9);
	return 0;}
