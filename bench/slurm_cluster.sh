# Sourced by the Slurm benches: setup_slurm makes this machine a single-node Slurm cluster
# (Debian's slurm-wlm and munge, installed when missing; root, CPUs and memory of the machine)
# unless one already answers.
install_slurm() {
  command -v sbatch >/dev/null 2>&1 && return 0
  echo "installing slurm-wlm" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
}

setup_slurm() {
  install_slurm
  sinfo -h >/dev/null 2>&1 && return 0
  echo "setting up a single-node Slurm cluster" >&2
  local host; host=$(hostname -s)
  mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm /run/munge
  [ -f /etc/munge/munge.key ] || (dd if=/dev/urandom bs=1 count=1024 2>/dev/null > /etc/munge/munge.key)
  chown -R munge:munge /etc/munge /run/munge /var/lib/munge /var/log/munge 2>/dev/null || true
  chmod 400 /etc/munge/munge.key
  pgrep -x munged >/dev/null || runuser -u munge -- /usr/sbin/munged
  cat > /etc/slurm/slurm.conf <<CONF
ClusterName=fbkit
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=$(( $(free -m | awk '/Mem:/{print $2}') - 2048 )) State=UNKNOWN
PartitionName=fbkit Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
  pgrep -x slurmctld >/dev/null || slurmctld
  pgrep -x slurmd >/dev/null || slurmd
  for _ in $(seq 30); do sinfo -h 2>/dev/null | grep -q idle && return 0; sleep 1; done
  echo "slurm did not come up (see /var/log/slurm/)" >&2
  return 1
}

