//! The complete trace's args of a kernel about its collective: Kineto's metadata of
//! the `record_param_comms` op it was launched under, when the CPU trace has it
//! ([`ParamComms`]), then what an NCCL kernel's name says about the launch
//! (`collective`, `reduce_op`, `dtype`, `algorithm`, `protocol`: only the parts that
//! describe the launch, not the case the kernel has inlined; see
//! [`cupmon_records::nccl`]). The kernel's name stays as Kineto writes it.

use cupmon_records::nccl::NcclKernel;

use super::complete::KinetoArg;
use super::param_comms::ParamComms;

pub(crate) fn collective_args(
    name: &str,
    comms: Option<&ParamComms>,
) -> Vec<(&'static str, KinetoArg)> {
    let mut args: Vec<(&'static str, KinetoArg)> = comms
        .map(|c| {
            c.kernel_args()
                .into_iter()
                .map(|(k, v)| (k, KinetoArg::Raw(v)))
                .collect()
        })
        .unwrap_or_default();
    if let Some(k) = NcclKernel::parse(name) {
        // The op's `dtype` (the tensor's type) stands; the name's is coarser.
        let has_dtype = comms.is_some_and(ParamComms::has_dtype);
        for (key, value) in k.launch_args() {
            if !(key == "dtype" && has_dtype) {
                args.push((key, KinetoArg::Str(value.to_owned())));
            }
        }
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(args: &[(&'static str, KinetoArg)]) -> Vec<&'static str> {
        args.iter().map(|(k, _)| *k).collect()
    }

    #[test]
    fn name_args_follow_kinetos_and_its_dtype_wins() {
        let name = "ncclDevKernel_AllReduce_Sum_f32_TREE_LL(ncclDevKernelArgsStorage<4096ul>)";
        assert_eq!(
            keys(&collective_args(name, None)),
            ["collective", "dtype", "algorithm"]
        );
        let mut comms = ParamComms::default();
        comms.set(ParamComms::key_index(b"dtype").unwrap(), b"\"Float\"");
        comms.set(
            ParamComms::key_index(b"Process Group Name").unwrap(),
            b"\"0\"",
        );
        assert_eq!(
            keys(&collective_args(name, Some(&comms))),
            ["Process Group Name", "collective", "algorithm"]
        );
        // A non-NCCL kernel under the op gets Kineto's args (as Kineto gives them), no more.
        assert_eq!(
            keys(&collective_args("ampere_sgemm_128x64_nn", Some(&comms))),
            ["Process Group Name"]
        );
        assert!(collective_args("ampere_sgemm_128x64_nn", None).is_empty());
    }
}
