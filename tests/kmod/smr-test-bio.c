// SPDX-License-Identifier: GPL-2.0
/*
 * smr-test-bio: a test-only module (never installed) that sends bios no
 * user can send through a block device file, for the VM suite: a write
 * with REQ_PREFLUSH and data followed by writes pipelined behind it, and
 * zone management at any sector. In-kernel users of a zoned disk (file
 * systems, stacking drivers) may send these; the block layer's ioctls do
 * not.
 *
 * Its one file, /sys/kernel/debug/smr_test_bio/run, takes a command that
 * names the device by a file descriptor of the writing process:
 *
 *   FD write SECTOR NR_SECTORS COUNT [preflush] [fua]
 *	COUNT writes of NR_SECTORS (at most a page) each, back to back from
 *	SECTOR, submitted without waiting; the first carries the flags.
 *	Write k (from 0) is filled with the byte (k ^ 0xa5) & 0xff.
 *   FD reset|finish|open|close SECTOR
 *	one zone management bio at SECTOR, waited for.
 *
 * Reading the file gives the last command's results: the errno of each
 * bio in submission order (0 for success), space separated.
 *
 *	exec 3<>/dev/smrhm0
 *	echo "3 write 0 8 4 preflush" > /sys/kernel/debug/smr_test_bio/run
 *	cat /sys/kernel/debug/smr_test_bio/run		# "0 0 0 0"
 */
#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/completion.h>
#include <linux/debugfs.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>

#define TB_MAX_BIOS	64
#define TB_TIMEOUT	(60 * HZ)

struct tb_run {
	atomic_t pending;
	struct completion done;
	int status[TB_MAX_BIOS];
};

struct tb_slot {
	struct tb_run *run;
	int idx;
	struct page *page;
	struct bio *bio;	/* held (bio_get) until put in task context */
};

static struct dentry *tb_dir;
static DEFINE_MUTEX(tb_lock);
static char tb_result[TB_MAX_BIOS * 5 + 2];

static void tb_end_io(struct bio *bio)
{
	struct tb_slot *slot = bio->bi_private;
	struct tb_run *run = slot->run;

	run->status[slot->idx] = blk_status_to_errno(bio->bi_status);
	bio_put(bio);
	if (atomic_dec_and_test(&run->pending))
		complete(&run->done);
}

static void tb_set_result(const int *status, int n)
{
	int i, len = 0;

	tb_result[0] = '\0';
	for (i = 0; i < n; i++)
		len += scnprintf(tb_result + len, sizeof(tb_result) - len,
				 "%s%d", i ? " " : "", status[i]);
	scnprintf(tb_result + len, sizeof(tb_result) - len, "\n");
}

static int tb_writes(struct block_device *bdev, sector_t sector,
		     unsigned int nr, unsigned int count, blk_opf_t flags)
{
	struct tb_slot *slots;
	struct tb_run *run;
	unsigned int i;
	int ret = 0;

	if (!nr || nr > PAGE_SIZE >> SECTOR_SHIFT || !count ||
	    count > TB_MAX_BIOS)
		return -EINVAL;
	run = kzalloc(sizeof(*run), GFP_KERNEL);
	slots = kcalloc(count, sizeof(*slots), GFP_KERNEL);
	if (!run || !slots) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < count; i++) {
		slots[i].page = alloc_page(GFP_KERNEL);
		if (!slots[i].page) {
			ret = -ENOMEM;
			goto out;
		}
		memset(page_address(slots[i].page), (i ^ 0xa5) & 0xff, PAGE_SIZE);
		slots[i].run = run;
		slots[i].idx = i;
	}
	atomic_set(&run->pending, count);
	init_completion(&run->done);
	for (i = 0; i < count; i++) {
		/*
		 * From the per-cpu bio cache (REQ_ALLOC_CACHE), as io_uring's
		 * polled writes are and, from 7.x, every bio_alloc() from a
		 * cached bio_set: a driver must not copy that flag into a
		 * bio of its own bio_set (dm-smr-hm.c did; 7.3 panicked in
		 * bio_put(), 6.1 warned). Held by a reference, so that the
		 * last put runs here, in task context, as the cache needs.
		 */
		struct bio *bio = bio_alloc_bioset(bdev, 1, REQ_OP_WRITE |
						   (i ? 0 : flags) | REQ_ALLOC_CACHE,
						   GFP_KERNEL, &fs_bio_set);

		bio_get(bio);
		slots[i].bio = bio;

		bio->bi_iter.bi_sector = sector + (sector_t)i * nr;
		__bio_add_page(bio, slots[i].page, nr << SECTOR_SHIFT, 0);
		bio->bi_private = &slots[i];
		bio->bi_end_io = tb_end_io;
		submit_bio(bio);
	}
	if (!wait_for_completion_timeout(&run->done, TB_TIMEOUT)) {
		/*
		 * The bios still point at run and slots, and will call
		 * tb_end_io(): leave them, and the module with them.
		 */
		__module_get(THIS_MODULE);
		pr_err("smr-test-bio: writes not done after %d s\n",
		       TB_TIMEOUT / HZ);
		return -ETIMEDOUT;
	}
	tb_set_result(run->status, count);
out:
	if (slots)
		for (i = 0; i < count; i++) {
			if (slots[i].bio)
				bio_put(slots[i].bio);
			if (slots[i].page)
				__free_page(slots[i].page);
		}
	kfree(slots);
	kfree(run);
	return ret;
}

static int tb_zone_op(struct block_device *bdev, enum req_op op,
		      sector_t sector)
{
	struct bio *bio = bio_alloc(bdev, 0, op, GFP_KERNEL);
	int status;

	bio->bi_iter.bi_sector = sector;
	status = submit_bio_wait(bio);
	bio_put(bio);
	tb_set_result(&status, 1);
	return 0;
}

static ssize_t tb_run_write(struct file *f, const char __user *ubuf,
			    size_t len, loff_t *ppos)
{
	char buf[128], op[16], fl1[16] = "", fl2[16] = "";
	unsigned long long sector;
	unsigned int nr = 0, count = 0;
	blk_opf_t flags = 0;
	struct file *dev;
	int fd, n, ret;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	n = sscanf(buf, "%d %15s %llu %u %u %15s %15s", &fd, op, &sector, &nr,
		   &count, fl1, fl2);
	if (n < 3)
		return -EINVAL;
	if (!strcmp(fl1, "preflush") || !strcmp(fl2, "preflush"))
		flags |= REQ_PREFLUSH;
	if (!strcmp(fl1, "fua") || !strcmp(fl2, "fua"))
		flags |= REQ_FUA;

	dev = fget(fd);
	if (!dev)
		return -EBADF;
	if (!S_ISBLK(file_inode(dev)->i_mode) || !(dev->f_mode & FMODE_WRITE)) {
		fput(dev);
		return -EINVAL;
	}
	mutex_lock(&tb_lock);
	tb_result[0] = '\0';
	if (!strcmp(op, "write") && n >= 5)
		ret = tb_writes(I_BDEV(dev->f_mapping->host), sector, nr, count,
				flags);
	else if (!strcmp(op, "reset"))
		ret = tb_zone_op(I_BDEV(dev->f_mapping->host), REQ_OP_ZONE_RESET, sector);
	else if (!strcmp(op, "finish"))
		ret = tb_zone_op(I_BDEV(dev->f_mapping->host), REQ_OP_ZONE_FINISH, sector);
	else if (!strcmp(op, "open"))
		ret = tb_zone_op(I_BDEV(dev->f_mapping->host), REQ_OP_ZONE_OPEN, sector);
	else if (!strcmp(op, "close"))
		ret = tb_zone_op(I_BDEV(dev->f_mapping->host), REQ_OP_ZONE_CLOSE, sector);
	else
		ret = -EINVAL;
	mutex_unlock(&tb_lock);
	fput(dev);
	return ret ? ret : len;
}

static ssize_t tb_run_read(struct file *f, char __user *ubuf, size_t len,
			   loff_t *ppos)
{
	ssize_t ret;

	mutex_lock(&tb_lock);
	ret = simple_read_from_buffer(ubuf, len, ppos, tb_result,
				      strlen(tb_result));
	mutex_unlock(&tb_lock);
	return ret;
}

static const struct file_operations tb_run_fops = {
	.owner = THIS_MODULE,
	.write = tb_run_write,
	.read = tb_run_read,
	.llseek = default_llseek,
};

static int __init tb_init(void)
{
	tb_dir = debugfs_create_dir("smr_test_bio", NULL);
	debugfs_create_file("run", 0600, tb_dir, NULL, &tb_run_fops);
	return 0;
}

static void __exit tb_exit(void)
{
	debugfs_remove_recursive(tb_dir);
}

module_init(tb_init);
module_exit(tb_exit);
MODULE_DESCRIPTION("dm-smr test helper: bios a block device file cannot send");
MODULE_LICENSE("GPL");
